package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/**
 * RESUME_CHECK_HALF_MESSAGE (323; MQAdminExt.resumeCheckHalfMessage): a transaction whose producer answered UNKNOW
 * to transactionCheckMax check-backs is parked in TRANS_CHECK_MAX_TIME_TOPIC and no longer checked; resuming the
 * parked copy puts it back on the half queue with its check count at 0, the broker asks the producer again, and
 * the commit it answers then delivers the message once. transactionCheckMax is set to 1 for the scenario (live).
 */
public class ResumeHalfMessageTest extends ScenarioBase {
    private static final String CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC";
    private static final long CHECK_WAIT_MS = Long.getLong("txCheckWaitMs", 90_000L);

    @Test
    void parkedTransactionIsCheckedAgainAndCommitted() throws Exception {
        String topic = topic();
        DefaultMQProducer plain = producer();
        assertSendOk(plain.send(msg(topic, "Tx", "plain", "plain")));
        MQClientAPIImpl api = AdminApi.api(plain);
        String broker = AdminApi.masterAddr(api);
        String key = "stuck_" + RUN_ID;

        AtomicBoolean commit = new AtomicBoolean(false);
        AtomicInteger checks = new AtomicInteger();
        TransactionMQProducer tp = new TransactionMQProducer(group("tx"));
        configureProducer(tp);
        tp.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                checks.incrementAndGet();
                return commit.get() ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.UNKNOW;
            }
        });
        tp.start();
        onClose(tp::shutdown);
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("the plain message", rec, List.of("plain"));

        setCheckMax(api, broker, "1");
        try {
            TransactionSendResult sent = tp.sendMessageInTransaction(msg(topic, "Tx", key, "body"), null);
            assertSendOk(sent);
            // checked once (UNKNOW), then parked: found by its UNIQ_KEY in TRANS_CHECK_MAX_TIME_TOPIC
            long deadline = System.currentTimeMillis() + 2 * CHECK_WAIT_MS;
            MessageExt parked = null;
            while (parked == null) {
                try {
                    parked = plain.viewMessage(CHECK_MAX_TIME_TOPIC, sent.getMsgId());
                } catch (Exception notYet) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new AssertionError("never parked in " + CHECK_MAX_TIME_TOPIC + " (" + checks.get() + " checks)", notYet);
                    }
                    sleep(500);
                }
            }
            assertEquals(key, parked.getKeys());
            assertTrue(checks.get() >= 1, "parked without a check-back");
            assertTrue(!rec.byKey.containsKey(key), "delivered before any commit");

            commit.set(true);
            int before = checks.get();
            assertTrue(resume(api, broker, ((MessageClientExt) parked).getOffsetMsgId()), "resumeCheckHalfMessage answered false");
            awaitAllKeys("the resumed transaction, committed at its next check", rec, List.of("plain", key), 2 * CHECK_WAIT_MS);
            assertTrue(checks.get() > before, "delivered without a new check-back");
            sleep(QUIET_MS);
            assertEquals(1, rec.byKey.get(key).size(), "deliveries of " + key);
            // 127.0.0.1:0, offset 2^47 - 1: beyond the log (Java re-puts whatever record an id points at, so not offset 0)
            assertTrue(!resume(api, broker, "7F0000010000000000007FFFFFFFFFFF"), "a msgId with no message is refused");
        } finally {
            setCheckMax(api, broker, "15");
        }
    }

    private static void setCheckMax(MQClientAPIImpl api, String broker, String value) throws Exception {
        Properties p = new Properties();
        p.setProperty("transactionCheckMax", value);
        api.updateBrokerConfig(broker, p, AdminApi.TIMEOUT_MS);
    }

    /** 5.x takes (addr, topic, msgId, timeout), 4.9.x (addr, msgId, timeout). */
    private static boolean resume(MQClientAPIImpl api, String broker, String offsetMsgId) throws Exception {
        try {
            return (Boolean) invoke(MQClientAPIImpl.class.getMethod("resumeCheckHalfMessage", String.class, String.class, String.class, long.class),
                api, broker, CHECK_MAX_TIME_TOPIC, offsetMsgId, AdminApi.TIMEOUT_MS);
        } catch (NoSuchMethodException old) {
            return (Boolean) invoke(MQClientAPIImpl.class.getMethod("resumeCheckHalfMessage", String.class, String.class, long.class),
                api, broker, offsetMsgId, AdminApi.TIMEOUT_MS);
        }
    }
}
