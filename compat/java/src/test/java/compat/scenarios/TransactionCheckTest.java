package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/**
 * Transaction check-back: the local transaction answers UNKNOW, so the broker must ask the producer
 * (CHECK_TRANSACTION_STATE) and act on the answer given to the check.
 * <p>
 * How long to wait for a check is set by {@code -DtxCheckWaitMs} (default 90 s: the official 4.9.8 broker checks
 * every 60 s, a half message once it is older than 6 s; 5.x every 30 s). Against our server started with
 * {@code --transactionCheckInterval=2000} checks come after 6-8 s.
 */
public class TransactionCheckTest extends ScenarioBase {
    private static final long CHECK_WAIT_MS = Long.getLong("txCheckWaitMs", 90_000L);

    /** What the check listener saw for one message key. */
    private static final class Check {
        final String key;
        final String topic;
        final String body;
        final String transactionId;
        final String checkTimes;

        Check(MessageExt m) {
            key = m.getKeys();
            topic = m.getTopic();
            body = body(m);
            transactionId = m.getTransactionId();
            checkTimes = m.getProperty("TRANSACTION_CHECK_TIMES");
        }
    }

    /**
     * commit*: UNKNOW, then COMMIT on the first check; rollback*: UNKNOW, then ROLLBACK; again*: UNKNOW at the
     * first check too, COMMIT at the second. Committed ones are delivered exactly once, rolled-back ones never.
     */
    @Test
    void unknownThenCheckCommitsOrRollsBack() throws Exception {
        String topic = topic();
        // create the topic with a normal message first (half messages go to RMQ_SYS_TRANS_HALF_TOPIC)
        DefaultMQProducer plain = producer();
        assertSendOk(plain.send(msg(topic, "Tx", "plain", "plain")));

        Map<String, List<Check>> checks = new ConcurrentHashMap<>();
        TransactionMQProducer tp = new TransactionMQProducer(group("tx"));
        configureProducer(tp);
        tp.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                List<Check> seen = checks.computeIfAbsent(msg.getKeys(), k -> new CopyOnWriteArrayList<>());
                seen.add(new Check(msg));
                if (msg.getKeys().startsWith("rollback")) {
                    return LocalTransactionState.ROLLBACK_MESSAGE;
                }
                if (msg.getKeys().startsWith("again") && seen.size() < 2) {
                    return LocalTransactionState.UNKNOW;
                }
                return LocalTransactionState.COMMIT_MESSAGE;
            }
        });
        tp.start();
        onClose(tp::shutdown);

        // the consumer is live before any transaction starts, so an early delivery would be seen
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("the plain message", rec, List.of("plain"));

        List<String> committed = new ArrayList<>(List.of("plain"));
        List<String> rolledBack = new ArrayList<>();
        Map<String, TransactionSendResult> sent = new ConcurrentHashMap<>();
        for (int i = 0; i < 3; i++) {
            for (String kind : List.of("commit", "rollback", "again")) {
                if (kind.equals("again") && i > 0) {
                    continue;
                }
                String key = kind + i;
                TransactionSendResult r = tp.sendMessageInTransaction(msg(topic, "Tx", key, "body " + key), null);
                assertSendOk(r);
                assertEquals(LocalTransactionState.UNKNOW, r.getLocalTransactionState(), "local state of " + key);
                sent.put(key, r);
                (kind.equals("rollback") ? rolledBack : committed).add(key);
            }
        }
        List<String> checkedKeys = new ArrayList<>(committed.subList(1, committed.size()));
        checkedKeys.addAll(rolledBack);

        // nothing is delivered before the broker has checked
        sleep(Math.min(QUIET_MS, 2_000));
        if (checks.isEmpty()) {
            assertEquals(List.of("plain"), new ArrayList<>(rec.byKey.keySet()), "delivered before any check");
        }

        await("a check-back for every transaction", CHECK_WAIT_MS, () -> checks.keySet().containsAll(checkedKeys));
        await("a second check-back for again0", 2 * CHECK_WAIT_MS, () -> checks.getOrDefault("again0", List.of()).size() >= 2);
        long deadline = System.currentTimeMillis() + CHECK_WAIT_MS;
        while (!rec.hasAll(committed) && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(rec.hasAll(committed), "committed after check-back, missing " + rec.missing(committed));
        sleep(QUIET_MS);

        assertTrue(rec.unexpected(committed).isEmpty(), "rolled back messages delivered: " + rec.unexpected(committed));
        for (String key : committed) {
            assertEquals(1, rec.byKey.get(key).size(), "deliveries of " + key);
        }
        for (String key : checkedKeys) {
            Check c = checks.get(key).get(0);
            assertEquals(topic, c.topic, "topic of the checked message " + key);
            assertEquals("body " + key, c.body, "body of the checked message " + key);
            assertEquals(sent.get(key).getMsgId(), c.transactionId, "transactionId of the checked message " + key);
            assertEquals("1", c.checkTimes, "TRANSACTION_CHECK_TIMES at the first check of " + key);
        }
        assertEquals("2", checks.get("again0").get(1).checkTimes, "TRANSACTION_CHECK_TIMES at the second check");
        for (String key : committed.subList(1, committed.size())) {
            MessageExt m = rec.first(key);
            assertEquals(sent.get(key).getMsgId(), m.getMsgId(), "msgId of " + key);
            assertEquals("body " + key, body(m));
            assertEquals("Tx", m.getTags());
            assertNotNull(m.getProperty("PGROUP"), "PGROUP on " + key);
            // the Java broker keeps the half message's property string on the committed message
            assertEquals("true", m.getProperty("TRAN_MSG"), "TRAN_MSG on " + key);
        }
        System.out.println("[compat] check-backs per key: " + checks.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue().size()).sorted().toList());
    }
}
