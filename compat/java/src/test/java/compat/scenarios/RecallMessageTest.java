package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Assumptions;

/**
 * RecallMessage (5.3.x clients: SendResult.getRecallHandle, DefaultMQProducer.recallMessage; RECALL_MESSAGE 370): a
 * timer message recalled before it is due is never delivered; the others of its slot are. Called through reflection
 * so the source compiles with the 4.9.8 client, where the scenario is skipped. Needs a broker with timers and
 * recallMessageEnable=true (compat/runner.mjs starts both servers so).
 */
public class RecallMessageTest extends ScenarioBase {
    @BeforeEach
    void requireRecall() {
        requireFeature("timers", "the broker has no 5.x timer messages");
        requireFeature("recall", "the broker does not recall timer messages");
        Assumptions.assumeTrue(recallMethod() != null, "this client has no DefaultMQProducer.recallMessage (5.3.x and later)");
    }

    private static Method recallMethod() {
        try {
            return DefaultMQProducer.class.getMethod("recallMessage", String.class, String.class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static String recallHandle(SendResult r) throws Exception {
        return (String) SendResult.class.getMethod("getRecallHandle").invoke(r);
    }

    /** The producer's recallMessage; a broker refusal comes back as the MQBrokerException it throws. */
    private static String recall(DefaultMQProducer p, String topic, String handle) throws Exception {
        return (String) invoke(recallMethod(), p, topic, handle);
    }

    private static Message timerMsg(String topic, String key, long deliverMs) {
        Message m = msg(topic, "Timer", key, "recall body " + key);
        MessageAccessor.putProperty(m, "TIMER_DELIVER_MS", Long.toString(deliverMs));
        return m;
    }

    /**
     * Five timers due together, two recalled, then a later one as the witness: timers are re-put in due order, so
     * once the witness arrived the recalled ones' slot is done.
     */
    @Test
    void recalledTimerIsNeverDelivered() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        assertSendOk(p.send(msg(topic, "Plain", "plain", "plain")));
        MessageQueue mq = awaitRoute(topic).get(0);

        long dueMs = System.currentTimeMillis() + 4000;
        Map<String, SendResult> sent = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            SendResult r = p.send(timerMsg(topic, "r" + i, dueMs), mq);
            assertSendOk(r);
            String handle = recallHandle(r);
            assertTrue(handle != null && !handle.isEmpty(), "no recall handle for a timer message: " + r);
            sent.put("r" + i, r);
        }
        SendResult plain = p.send(msg(topic, "Plain", "plain2", "plain"), mq);
        assertTrue(recallHandle(plain) == null || recallHandle(plain).isEmpty(), "a plain message got a recall handle");

        for (String k : Arrays.asList("r1", "r3")) {
            String id = recall(p, topic, recallHandle(sent.get(k)));
            assertEquals(sent.get(k).getMsgId(), id, "recall answer for " + k);
        }
        assertSendOk(p.send(timerMsg(topic, "witness", dueMs + 2000), mq));

        Received got = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, got);
        List<String> expected = Arrays.asList("plain", "plain2", "r0", "r2", "r4", "witness");
        awaitAllKeys("delivered", got, expected);
        sleep(QUIET_MS);
        assertFalse(got.byKey.containsKey("r1") || got.byKey.containsKey("r3"), "a recalled message was delivered: " + got.byKey.keySet());
        awaitAllKeys("delivered", got, expected, 0);

        // Too late: the message was delivered, the handle's time has passed.
        try {
            recall(p, topic, recallHandle(sent.get("r0")));
            fail("a recall after the deliver time was accepted");
        } catch (MQBrokerException e) {
            assertEquals(604, e.getResponseCode(), "ILLEGAL_OPERATION expected: " + e);
        }
    }
}
