package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * 5.x cold-data flow control (MQClientAPIImpl.updateColdDataFlowCtrGroupConfig / removeColdDataFlowCtrGroupConfig /
 * getColdDataFlowCtrInfo: mqadmin updateColdDataFlowCtrGroupConfig and friends) and setCommitLogReadAheadMode. With
 * coldDataFlowControlEnable (set at the broker's start) and a hot ratio of 0 (everything behind the log's end is cold), a push consumer group
 * given a threshold of 8,000 bytes per 5 s gets SYSTEM_BUSY once its pulls passed it, which the stock client answers
 * by pulling that queue again 3 s later: it still gets every message, spread over at least those 3 s, while a group
 * without a threshold of its own (3 MiB) is not slowed. Called through reflection so the file compiles
 * against the 4.9.8 client, where it is skipped (a 4.9.x broker has neither).
 */
public class ColdDataTest extends ScenarioBase {
    /**
     * 24 × 1 KiB on 4 queues, 2 a pull: 12 pulls of about 27 KB in all, more than twice the slowed group's 8,000
     * bytes, so it passes them even when the broker's 5 s reset falls amid the pulls.
     */
    private static final int MESSAGES = 24;
    private static final String THRESHOLD_BYTES = "8000";
    /** The stock push consumer's pause after a pull failed (DefaultMQPushConsumer pullTimeDelayMillsWhenException). */
    private static final long CLIENT_BACKOFF_MS = 3_000;

    /** When each message first reached a group's listener, by group/msgId. */
    private final Map<String, Long> receivedAt = new ConcurrentHashMap<>();

    @BeforeEach
    void requireColdData() {
        requireFeature("coldData", "the broker has no cold-data flow control (UPDATE_COLD_DATA_FLOW_CTR_CONFIG, 2001)");
        Assumptions.assumeTrue(method("getColdDataFlowCtrInfo", String.class, long.class) != null,
            "this client has no MQClientAPIImpl.getColdDataFlowCtrInfo (5.x)");
    }

    private static Method method(String name, Class<?>... types) {
        try {
            return MQClientAPIImpl.class.getMethod(name, types);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static Object call(MQClientAPIImpl api, String name, Class<?>[] types, Object... args) throws Exception {
        return invoke(method(name, types), api, args);
    }

    private static String info(MQClientAPIImpl api, String broker) throws Exception {
        return (String) call(api, "getColdDataFlowCtrInfo", new Class<?>[] {String.class, long.class}, broker, AdminApi.TIMEOUT_MS);
    }

    /** The configTable object of the info JSON (its values are numbers: no nested braces). */
    private static String configTable(String info) {
        Matcher m = Pattern.compile("\"configTable\":\\{([^}]*)\\}").matcher(info);
        assertTrue(m.find(), "no configTable in " + info);
        return m.group(1);
    }

    private static void brokerConfig(MQClientAPIImpl api, String broker, String key, String value) throws Exception {
        Properties p = new Properties();
        p.setProperty(key, value);
        api.updateBrokerConfig(broker, p, AdminApi.TIMEOUT_MS);
    }

    @Test
    void groupPastItsThresholdIsSlowedNotStarved() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        byte[] body = new byte[1024];
        for (int i = 0; i < MESSAGES; i++) {
            keys.add("k" + i);
            assertSendOk(p.send(new Message(topic, "T", "k" + i, body)));
        }
        awaitRoute(topic);
        MQClientAPIImpl api = AdminApi.api(p);
        String broker = AdminApi.masterAddr(api);
        String slow = group("slow");
        String witness = group("witness");
        try {
            // The official broker sizes its page-cache checks only when started with the flow control on (set live,
            // it counts nothing for minutes): the harness starts both servers with coldDataFlowControlEnable=true.
            Assumptions.assumeTrue("true".equals(api.getBrokerConfig(broker, AdminApi.TIMEOUT_MS).getProperty("coldDataFlowControlEnable")),
                "start the broker with coldDataFlowControlEnable=true");
            brokerConfig(api, broker, "accessMessageInMemoryHotRatio", "0");
            Properties thresholds = new Properties();
            thresholds.setProperty(slow, THRESHOLD_BYTES);
            call(api, "updateColdDataFlowCtrGroupConfig", new Class<?>[] {String.class, Properties.class, long.class},
                broker, thresholds, AdminApi.TIMEOUT_MS);
            assertTrue(configTable(info(api, broker)).contains("\"" + slow + "\":" + THRESHOLD_BYTES), info(api, broker));

            Received slowGot = new Received();
            Received witnessGot = new Received();
            // 2 messages a pull, so each queue (6 messages) takes several pulls
            startSmallBatches(slow, topic, slowGot);
            startSmallBatches(witness, topic, witnessGot);
            awaitAllKeys("the group without a threshold of its own", witnessGot, keys);
            awaitAllKeys("the slowed group", slowGot, keys);
            long first = Long.MAX_VALUE;
            long last = 0;
            for (var m : slowGot.all) {
                first = Math.min(first, receivedAt(slow, m));
                last = Math.max(last, receivedAt(slow, m));
            }
            assertTrue(last - first >= CLIENT_BACKOFF_MS - 500,
                "the slowed group received everything within " + (last - first) + " ms: its pulls were not refused; " + info(api, broker));
            String during = info(api, broker);
            assertTrue(during.contains("\"runtimeTable\"") && during.contains("\"" + slow + "\""), during);

            call(api, "removeColdDataFlowCtrGroupConfig", new Class<?>[] {String.class, String.class, long.class},
                broker, slow, AdminApi.TIMEOUT_MS);
            assertFalse(configTable(info(api, broker)).contains(slow), info(api, broker));
        } finally {
            brokerConfig(api, broker, "accessMessageInMemoryHotRatio", "26");
        }
    }

    private long receivedAt(String group, MessageExt m) {
        return receivedAt.get(group + "/" + m.getMsgId());
    }

    private void startSmallBatches(String group, String topic, Received sink) throws Exception {
        DefaultMQPushConsumer c = pushConsumer(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPullBatchSize(2);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            msgs.forEach(m -> {
                receivedAt.putIfAbsent(group + "/" + m.getMsgId(), now);
                sink.add(m);
            });
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
    }

    @Test
    void readAheadModeTakesZeroOrOne() throws Exception {
        DefaultMQProducer p = producer();
        MQClientAPIImpl api = AdminApi.api(p);
        String broker = AdminApi.masterAddr(api);
        Class<?>[] types = {String.class, String.class, long.class};
        try {
            assertEquals("set commitlog readahead mode success, mode: 1",
                call(api, "setCommitLogReadAheadMode", types, broker, "1", AdminApi.TIMEOUT_MS));
            MQBrokerException bad = assertThrows(MQBrokerException.class,
                () -> call(api, "setCommitLogReadAheadMode", types, broker, "2", AdminApi.TIMEOUT_MS));
            assertEquals(29, bad.getResponseCode(), "INVALID_PARAMETER");
            assertEquals("set commitlog readahead mode param value error", bad.getErrorMessage());
        } finally {
            assertEquals("set commitlog readahead mode success, mode: 0",
                call(api, "setCommitLogReadAheadMode", types, broker, "0", AdminApi.TIMEOUT_MS));
        }
    }
}
