package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * 10b. Consumer-offset resume across a server restart. Phase "produce": send half A, consume it with group G,
 * shut the consumer down cleanly (offsets persisted to the broker), send half B. The harness restarts the server.
 * Phase "consume": a new consumer in G must get all of B and (almost) none of A. -DmaxRedelivered=N (default 0)
 * tolerates N re-deliveries of A.
 */
@Tag("restart")
public class OffsetResumeTest extends ScenarioBase {
    private static final String S = "offsetResume";

    @Test
    @EnabledIfSystemProperty(named = "phase", matches = "produce")
    void offsetResumeProduceAndConsumeHalf() throws Exception {
        String topic = topic();
        String group = group();
        int half = Integer.getInteger("restartMessages", 50) / 2;
        DefaultMQProducer p = producer();
        List<String> first = new ArrayList<>();
        for (int i = 0; i < half; i++) {
            first.add("a" + i);
            assertSendOk(p.send(msg(topic, "Or", "a" + i, "first half " + i)));
        }
        Received rec = new Received();
        DefaultMQPushConsumer c = startCollecting(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("first half", rec, first);
        // the listener has returned for all; wait for the in-memory offsets, commit them (see commitOffsetsSync)
        commitOffsetsSync(c, awaitRoute(topic), half);
        c.shutdown(); // persists offsets (UPDATE_CONSUMER_OFFSET) and unregisters
        List<String> second = new ArrayList<>();
        for (int i = 0; i < half; i++) {
            second.add("b" + i);
            assertSendOk(p.send(msg(topic, "Or", "b" + i, "second half " + i)));
        }
        RestartState.put(S, "topic", topic);
        RestartState.put(S, "group", group);
        RestartState.putList(S, "first", first);
        RestartState.putList(S, "second", second);
    }

    @Test
    @EnabledIfSystemProperty(named = "phase", matches = "consume")
    void offsetResumeAfterRestart() throws Exception {
        String topic = RestartState.get(S, "topic");
        String group = RestartState.get(S, "group");
        List<String> first = RestartState.getList(S, "first");
        List<String> second = RestartState.getList(S, "second");
        Received rec = new Received();
        startCollecting(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (!rec.hasAll(second) && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        sleep(QUIET_MS);
        assertTrue(rec.missing(second).isEmpty(), "missing from second half: " + rec.missing(second));
        assertTrue(rec.unexpected(all).isEmpty(), "unexpected: " + rec.unexpected(all));
        long redelivered = first.stream().filter(rec.byKey::containsKey).count();
        System.out.println("[compat] offset resume: redelivered " + redelivered + "/" + first.size() + " of the first half");
        int max = Integer.getInteger("maxRedelivered", 0);
        assertTrue(redelivered <= max, redelivered + " already-consumed messages redelivered (max " + max + ")");
    }
}
