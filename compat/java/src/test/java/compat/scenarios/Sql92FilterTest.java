package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * SQL92 message selectors (MessageSelector.bySql): the broker filters on message properties. Needs a broker with
 * enablePropertyFilter=true; against one without it the scenarios are skipped (JUnit "aborted"), not failed, since
 * that is a broker setting rather than a compatibility problem.
 */
public class Sql92FilterTest extends ScenarioBase {

    private static final int SYSTEM_ERROR = 1;
    private static final int SUBSCRIPTION_PARSE_FAILED = 23;

    /** Sends 48 messages with properties a = i % 6, b = yes/no, tag TagA/TagB; returns the keys matching {@code want}. */
    private List<String> produce(String topic, java.util.function.IntPredicate want) throws Exception {
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 48; i++) {
            String key = "k" + i;
            Message m = msg(topic, i % 4 == 0 ? "TagA" : "TagB", key, "sql " + i);
            m.putUserProperty("a", Integer.toString(i % 6));
            m.putUserProperty("b", i % 2 == 0 ? "yes" : "no");
            if (i % 5 == 0) {
                m.putUserProperty("price", Integer.toString(i * 10));
            }
            assertSendOk(p.send(m));
            if (want.test(i)) {
                keys.add(key);
            }
        }
        awaitRoute(topic);
        return keys;
    }

    private DefaultMQPushConsumer sqlPushConsumer(String group, String topic, String sql, Received sink) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, MessageSelector.bySql(sql));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(sink::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        onClose(c::shutdown);
        return c;
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** start(), skipping the scenario when the broker has property filtering switched off. */
    private static void startOrSkip(ThrowingRunnable start) throws Exception {
        try {
            start.run();
        } catch (MQClientException e) {
            if (e.getResponseCode() == SYSTEM_ERROR
                && String.valueOf(e.getMessage()).contains("does not support consumer to filter message by SQL92")) {
                Assumptions.abort("broker has enablePropertyFilter=false: " + e.getMessage());
            }
            throw e;
        }
    }

    /** The MQClientException start() fails with (a skip still propagates). */
    private static MQClientException startFailure(ThrowingRunnable start) throws Exception {
        try {
            startOrSkip(start);
        } catch (MQClientException e) {
            return e;
        }
        return fail("start() succeeded");
    }

    private static void assertExactly(String what, Received rec, List<String> keys) throws InterruptedException {
        awaitAllKeys(what, rec, keys);
        sleep(QUIET_MS);
        assertTrue(rec.unexpected(keys).isEmpty(), what + ": unexpected keys " + rec.unexpected(keys));
        assertEquals(keys.size(), rec.distinct(), what + ": distinct messages");
    }

    /** Push consumer (pulls use the heartbeat's subscription) gets exactly the messages the selector picks. */
    @Test
    void pushConsumerSqlSelector() throws Exception {
        String topic = topic();
        // a between 0 and 3 and b = 'yes': a = i % 6 in {0,2} (b = yes means i even)
        List<String> want = produce(topic, i -> i % 6 <= 3 && i % 2 == 0);
        Received rec = new Received();
        DefaultMQPushConsumer c = sqlPushConsumer(group(), topic, "a between 0 and 3 and b = 'yes'", rec);
        startOrSkip(c::start);
        assertExactly("push bySql", rec, want);
        for (MessageExt m : rec.all) {
            int a = Integer.parseInt(m.getUserProperty("a"));
            assertTrue(a >= 0 && a <= 3 && "yes".equals(m.getUserProperty("b")), "got a=" + a + " b=" + m.getUserProperty("b"));
        }
    }

    /** TAGS, IS NULL, numeric coercion of string properties, OR/AND precedence and IN. */
    @Test
    void pushConsumerSqlWithTagsNullAndIn() throws Exception {
        String topic = topic();
        // (TAGS = 'TagA' AND price IS NULL) OR price > 300 OR a IN ('5')
        List<String> want = produce(topic, i -> (i % 4 == 0 && i % 5 != 0) || (i % 5 == 0 && i * 10 > 300) || i % 6 == 5);
        Received rec = new Received();
        DefaultMQPushConsumer c = sqlPushConsumer(group(), topic,
            "TAGS = 'TagA' AND price IS NULL OR price > 300 OR a IN ('5')", rec);
        startOrSkip(c::start);
        assertExactly("push bySql with TAGS/IS NULL/IN", rec, want);
    }

    /** Lite pull subscribe(topic, bySql): its pulls carry the selector themselves (subscription flag). */
    @Test
    void litePullSqlSelector() throws Exception {
        requireLitePullMessage();
        String topic = topic();
        List<String> want = produce(topic, i -> i % 6 >= 4);
        DefaultLitePullConsumer c = litePullConsumer(group());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, MessageSelector.bySql("a >= 4"));
        startOrSkip(c::start);
        Received rec = new Received();
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (!rec.hasAll(want) && System.currentTimeMillis() < deadline) {
            c.poll(500).forEach(rec::add);
        }
        long quietEnd = System.currentTimeMillis() + QUIET_MS;
        while (System.currentTimeMillis() < quietEnd) {
            c.poll(200).forEach(rec::add);
        }
        assertExactly("lite pull bySql", rec, want);
    }

    /** A selector that does not compile makes start() fail with SUBSCRIPTION_PARSE_FAILED (CHECK_CLIENT_CONFIG). */
    @Test
    void malformedSelectorFailsAtStart() throws Exception {
        String topic = topic();
        produce(topic, i -> false);
        for (String bad : new String[] {"a = = 1", "a > 'x'", "a BETWEEN 3 AND 1"}) {
            DefaultMQPushConsumer c = sqlPushConsumer(group("p" + Math.abs(bad.hashCode())), topic, bad, new Received());
            MQClientException e = startFailure(c::start);
            assertEquals(SUBSCRIPTION_PARSE_FAILED, e.getResponseCode(), "response code for " + bad + ": " + e);
        }
        DefaultLitePullConsumer lite = litePullConsumer(group("lite"));
        lite.subscribe(topic, MessageSelector.bySql("a IN (1)"));
        MQClientException e = startFailure(lite::start);
        assertEquals(SUBSCRIPTION_PARSE_FAILED, e.getResponseCode(), "lite pull: " + e);
    }
}
