package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The 5.x remoting push consumer in POP mode: setClientRebalance(false) and the group's consume mode set to POP for
 * the topic (SET_MESSAGE_REQUEST_MODE, what {@code mqadmin setConsumeMode -m POP} sends). The broker then assigns
 * queue -1 (QUERY_ASSIGNMENT), the client pops (POP_MESSAGE), acks (ACK_MESSAGE), and a RECONSUME_LATER becomes
 * CHANGE_MESSAGE_INVISIBLETIME of 10 s, after which the broker's revive re-delivers the message from the POP retry
 * topic with reconsumeTimes 1. The remoting POP client never dead-letters (past maxReconsumeTimes it acks), and an
 * orderly listener always rebalances on the client, so FIFO POP and DLQ are covered by the gRPC scenarios.
 * 4.9.x clients have no POP: the scenarios skip themselves there. Reflection keeps the file compiling against both.
 */
public class PopConsumerTest extends ScenarioBase {

    private static void requirePopClient() {
        boolean has = false;
        for (Method m : DefaultMQPushConsumer.class.getMethods()) {
            if (m.getName().equals("setClientRebalance")) {
                has = true;
            }
        }
        Assumptions.assumeTrue(has, "4.9.x clients have no POP consumption (setClientRebalance / QUERY_ASSIGNMENT)");
    }

    /** MQClientAPIImpl.setMessageRequestMode(addr, topic, group, MessageRequestMode.POP, popShareQueueNum, timeout). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void setPopMode(MQClientAPIImpl api, String brokerAddr, String topic, String group) throws Exception {
        for (Method m : api.getClass().getMethods()) {
            if (m.getName().equals("setMessageRequestMode") && m.getParameterCount() == 6) {
                Class<? extends Enum> modeType = (Class<? extends Enum>) m.getParameterTypes()[3];
                m.invoke(api, brokerAddr, topic, group, Enum.valueOf(modeType, "POP"), 0, AdminApi.TIMEOUT_MS);
                return;
            }
        }
        throw new IllegalStateException("no MQClientAPIImpl.setMessageRequestMode");
    }

    private DefaultMQPushConsumer popConsumer(String group, String topic, MessageListenerConcurrently listener) throws Exception {
        DefaultMQPushConsumer c = pushConsumer(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.getClass().getMethod("setClientRebalance", boolean.class).invoke(c, false);
        c.registerMessageListener(listener);
        return c;
    }

    /** Creates the topic and sets the group's mode to POP on the broker before the consumer starts. */
    private MQClientAPIImpl prepare(DefaultMQProducer p, String topic, String group) throws Exception {
        MQClientAPIImpl api = AdminApi.api(p);
        String broker = AdminApi.masterAddr(api);
        AdminApi.createTopic(api, broker, topic, 4, 4, 6);
        awaitRoute(topic);
        setPopMode(api, broker, topic, group);
        return api;
    }

    @Test
    void popSendReceiveAck() throws Exception {
        requirePopClient();
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        MQClientAPIImpl api = prepare(p, topic, group);
        String broker = AdminApi.masterAddr(api);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            assertSendOk(p.send(msg(topic, "Pop", "pop-" + i, "pop body " + i)));
            keys.add("pop-" + i);
        }
        Received got = new Received();
        DefaultMQPushConsumer c = popConsumer(group, topic, (msgs, ctx) -> {
            msgs.forEach(got::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        await("20 messages popped", () -> got.hasAll(keys));
        for (MessageExt m : got.all) {
            assertEquals(topic, m.getTopic());
            assertEquals("Pop", m.getTags());
            assertEquals("pop body " + m.getKeys().substring(4), body(m));
            assertTrue(m.getProperty("POP_CK") != null, "POP_CK on " + m.getKeys());
        }

        // the broker lists the POP consumer as a connection of the group, and its progress shows nothing left
        String clientId = c.getDefaultMQPushConsumerImpl().getmQClientFactory().getClientId();
        var connections = api.getConsumerConnectionList(broker, group, AdminApi.TIMEOUT_MS);
        assertTrue(connections.getConnectionSet().stream().anyMatch(x -> x.getClientId().equals(clientId)),
            "consumerConnection lists " + clientId);
        await("consumer progress shows no lag", () -> {
            try {
                return api.getConsumeStats(broker, group, topic, AdminApi.TIMEOUT_MS).computeTotalDiff() == 0;
            } catch (Exception e) {
                return false;
            }
        });
        sleep(QUIET_MS);
        assertEquals(0, got.duplicates(), "nothing popped twice: " + got.all.size() + " deliveries");
    }

    @Test
    void popReconsumeLaterComesBackFromTheRetryTopic() throws Exception {
        requirePopClient();
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        prepare(p, topic, group);
        for (int i = 0; i < 3; i++) {
            assertSendOk(p.send(msg(topic, "Pop", "again-" + i, "again body " + i)));
        }
        Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
        Map<String, Long> firstAt = new ConcurrentHashMap<>();
        List<Long> retryDelays = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = popConsumer(group, topic, (msgs, ctx) -> {
            boolean later = false;
            for (MessageExt m : msgs) {
                attempts.computeIfAbsent(m.getKeys(), k -> new CopyOnWriteArrayList<>()).add(m.getReconsumeTimes());
                firstAt.putIfAbsent(m.getKeys(), System.currentTimeMillis());
                if (m.getKeys().equals("again-1") && m.getReconsumeTimes() == 0) {
                    later = true;
                } else if (m.getKeys().equals("again-1")) {
                    retryDelays.add(System.currentTimeMillis() - firstAt.get("again-1"));
                    assertEquals(topic, m.getTopic(), "a retried message carries the requested topic");
                    // popped from the POP retry topic %RETRY%<group>_<topic>: its POP_CK says so (flag 1)
                    assertEquals("1", m.getProperty("POP_CK").split(" ")[4], "POP_CK " + m.getProperty("POP_CK"));
                }
            }
            return later ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.setConsumeMessageBatchMaxSize(1);
        c.start();
        await("again-1 delivered a second time", 90_000, () -> attempts.getOrDefault("again-1", List.of()).size() >= 2);
        assertEquals(List.of(0, 1), attempts.get("again-1").subList(0, 2), "reconsumeTimes of the retried message");
        assertTrue(retryDelays.get(0) >= 9_000, "came back after the 10 s pop delay, not " + retryDelays.get(0) + " ms");
        sleep(QUIET_MS);
        assertEquals(List.of(0), attempts.get("again-0"), "again-0");
        assertEquals(List.of(0), attempts.get("again-2"), "again-2");
        assertEquals(2, attempts.get("again-1").size(), "again-1 acked after the retry");
    }
}
