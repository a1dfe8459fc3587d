package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * 5.x timer messages (arbitrary delivery time): the TIMER_DELIVER_MS property. Set through MessageAccessor so
 * the same source works with the 4.9.8 client (no setDeliverTimeMs) and 5.x (where putUserProperty refuses the
 * now-reserved name). Needs a broker with timers (ours, official 5.x with timerWheelEnable=true): run with
 * -Dtimers=false against a 4.9.x broker to skip. The broker and this JVM share a clock (same host).
 */
public class TimerMessageTest extends ScenarioBase {
    /** Slack allowed for clock differences between client and broker hosts (0 on one host). */
    private static final long CLOCK_SLACK_MS = Long.getLong("timerClockSlackMs", 0L);

    @BeforeEach
    void requireTimers() {
        Assumptions.assumeFalse("false".equalsIgnoreCase(System.getProperty("timers")),
            "-Dtimers=false: the broker has no 5.x timer messages");
    }

    private static Message timerMsg(String topic, String key, long deliverMs) {
        Message m = msg(topic, "Timer", key, "timer body " + key);
        MessageAccessor.putProperty(m, "TIMER_DELIVER_MS", Long.toString(deliverMs));
        return m;
    }

    /** Arrival time (this JVM's clock) of each delivered key. */
    private static final class Arrivals {
        final Map<String, Long> at = new ConcurrentHashMap<>();
        final Map<String, MessageExt> msgs = new ConcurrentHashMap<>();
        final List<String> dups = new ArrayList<>();
    }

    private void consume(String topic, Arrivals a) throws Exception {
        DefaultMQPushConsumer c = pushConsumer(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : msgs) {
                if (a.at.putIfAbsent(m.getKeys(), now) != null) {
                    synchronized (a.dups) {
                        a.dups.add(m.getKeys());
                    }
                }
                a.msgs.putIfAbsent(m.getKeys(), m);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        awaitRoute(topic);
        c.start();
    }

    /** Timers 3-8 s ahead, sent out of order to one queue: none arrives early; the broker re-puts them in due order. */
    @Test
    void deliverTimeIsHonoured() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        // create the topic (and its route) with a plain message first
        assertSendOk(p.send(msg(topic, "Plain", "plain", "plain")));
        MessageQueue mq = awaitRoute(topic).get(0);

        long base = System.currentTimeMillis() + 3000;
        int[] order = {4, 0, 3, 1, 5, 2};
        Map<String, Long> due = new LinkedHashMap<>();
        for (int i : order) {
            String key = "t" + i;
            long deliverMs = base + i * 1000L;
            SendResult r = p.send(timerMsg(topic, key, deliverMs), mq);
            assertSendOk(r);
            due.put(key, deliverMs);
        }

        Arrivals a = new Arrivals();
        consume(topic, a);
        List<String> keys = new ArrayList<>(due.keySet());
        keys.add("plain");
        await("all timer messages", () -> a.at.keySet().containsAll(keys));
        sleep(QUIET_MS);
        assertTrue(a.dups.isEmpty(), "duplicate deliveries " + a.dups);
        assertEquals(keys.size(), a.at.size(), "keys " + a.at.keySet());

        for (Map.Entry<String, Long> e : due.entrySet()) {
            MessageExt m = a.msgs.get(e.getKey());
            long arrived = a.at.get(e.getKey());
            assertTrue(arrived + CLOCK_SLACK_MS >= e.getValue(),
                e.getKey() + " arrived " + (e.getValue() - arrived) + " ms before its deliver time");
            assertTrue(m.getStoreTimestamp() + CLOCK_SLACK_MS >= e.getValue(),
                e.getKey() + " stored on " + topic + " " + (e.getValue() - m.getStoreTimestamp()) + " ms early");
            assertEquals(topic, m.getTopic());
            assertEquals(mq.getQueueId(), m.getQueueId(), "real queue id of " + e.getKey());
            assertEquals("Timer", m.getTags());
            assertEquals("timer body " + e.getKey(), body(m));
            assertEquals(Long.toString(e.getValue()), m.getProperty("TIMER_DELIVER_MS"));
        }
        // Re-put to the real queue in due order: queue offsets follow the deliver times.
        List<String> byOffset = new ArrayList<>(due.keySet());
        byOffset.sort(Comparator.comparingLong(k -> a.msgs.get(k).getQueueOffset()));
        List<String> byDue = new ArrayList<>(due.keySet());
        byDue.sort(Comparator.comparingLong(due::get));
        assertEquals(byDue, byOffset, "queue order of the delivered timers");
    }

    /** A deliver time beyond timerMaxDelaySec (3 days by default) is refused with MESSAGE_ILLEGAL (13). */
    @Test
    void beyondMaxDelayIsRefused() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        assertSendOk(p.send(msg(topic, "Plain", "plain", "plain")));
        long fourDays = 4L * 24 * 3600 * 1000;
        try {
            p.send(timerMsg(topic, "far", System.currentTimeMillis() + fourDays));
            fail("a timer 4 days ahead was accepted");
        } catch (MQBrokerException e) {
            assertEquals(13, e.getResponseCode(), "response code: " + e);
        }
    }
}
