package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/** Extra checks an experienced RocketMQ user would make. */
public class ExtraScenariosTest extends ScenarioBase {

    /** Bodies above the client's 4 KiB compression threshold (compressed text, random bytes, 1 MiB) round-trip. */
    @Test
    void largeBodiesCompressedRoundTrip() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        Map<String, byte[]> bodies = new HashMap<>();
        StringBuilder sb = new StringBuilder();
        while (sb.length() < 200 * 1024) {
            sb.append("compressible line ").append(sb.length()).append('\n');
        }
        bodies.put("text5k", sb.substring(0, 5 * 1024).getBytes(StandardCharsets.UTF_8));
        bodies.put("text200k", sb.toString().getBytes(StandardCharsets.UTF_8));
        byte[] rnd8k = new byte[8 * 1024];
        new Random(42).nextBytes(rnd8k);
        bodies.put("random8k", rnd8k);
        byte[] rnd1m = new byte[1024 * 1024];
        new Random(7).nextBytes(rnd1m);
        bodies.put("random1m", rnd1m);
        bodies.put("small4095", new byte[4095]);
        for (Map.Entry<String, byte[]> e : bodies.entrySet()) {
            assertSendOk(p.send(new Message(topic, "Big", e.getKey(), e.getValue())));
        }
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("large bodies", rec, bodies.keySet());
        for (Map.Entry<String, byte[]> e : bodies.entrySet()) {
            assertArrayEquals(e.getValue(), rec.first(e.getKey()).getBody(), "body of " + e.getKey());
        }
    }

    /** Non-ASCII tags, keys, user properties and body survive the trip (property string is UTF-8 on the wire). */
    @Test
    void unicodeTagsKeysPropertiesRoundTrip() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        String tag = "标签Ü";
        String key = "ключ🔑-1";
        Message m = new Message(topic, tag, key + " second-key", "こんにちは世界 🌍 body".getBytes(StandardCharsets.UTF_8));
        m.putUserProperty("名前", "値 ✓ \"quoted\" ; = & é");
        m.putUserProperty("ascii", "plain");
        m.setFlag(7);
        SendResult r = p.send(m);
        assertSendOk(r);
        Received rec = new Received();
        startCollecting(group(), topic, tag, ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("unicode message", rec, List.of(key));
        MessageExt got = rec.first(key);
        assertEquals(tag, got.getTags());
        assertEquals(key + " second-key", got.getKeys());
        assertEquals("こんにちは世界 🌍 body", body(got));
        assertEquals("値 ✓ \"quoted\" ; = & é", got.getUserProperty("名前"));
        assertEquals("plain", got.getUserProperty("ascii"));
        assertEquals(7, got.getFlag());
        assertEquals(r.getMsgId(), got.getMsgId());
    }

    /** After the first send the route is served: 4 queues on one broker, from producer and consumer APIs. */
    @Test
    void routeViaFetchPublishMessageQueues() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        SendResult r = p.send(msg(topic, "R", "k0", "route"));
        assertSendOk(r);
        List<MessageQueue> mqs = awaitRoute(topic);
        mqs = p.fetchPublishMessageQueues(topic);
        assertEquals(4, mqs.size(), "publish queues " + mqs);
        Set<Integer> ids = new TreeSet<>();
        Set<String> brokers = new HashSet<>();
        for (MessageQueue mq : mqs) {
            assertEquals(topic, mq.getTopic());
            ids.add(mq.getQueueId());
            brokers.add(mq.getBrokerName());
        }
        assertEquals(Set.of(0, 1, 2, 3), ids);
        assertEquals(1, brokers.size(), "one broker: " + brokers);
        assertEquals(r.getMessageQueue().getBrokerName(), brokers.iterator().next());
        System.out.println("[compat] route of " + topic + ": broker " + brokers + " queues " + ids);

        DefaultLitePullConsumer c = litePullConsumer(group());
        c.start();
        assertEquals(4, c.fetchMessageQueues(topic).size(), "subscribe queues");
    }

    /** send(msg, MessageQueue) lands in exactly that queue, with consecutive queue offsets per queue. */
    @Test
    void sendToExplicitQueues() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        assertSendOk(p.send(msg(topic, "Q", "create", "create")));
        List<MessageQueue> mqs = awaitRoute(topic);
        List<String> keys = new ArrayList<>(List.of("create"));
        for (MessageQueue mq : mqs) {
            long prev = -1;
            for (int i = 0; i < 3; i++) {
                String key = "q" + mq.getQueueId() + "-" + i;
                keys.add(key);
                SendResult r = p.send(msg(topic, "Q", key, key), mq);
                assertSendOk(r);
                assertEquals(mq.getQueueId(), r.getMessageQueue().getQueueId());
                if (prev >= 0) {
                    assertEquals(prev + 1, r.getQueueOffset(), "consecutive offsets in " + mq);
                }
                prev = r.getQueueOffset();
            }
        }
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("explicit-queue messages", rec, keys);
        for (MessageQueue mq : mqs) {
            assertEquals(mq.getQueueId(), rec.first("q" + mq.getQueueId() + "-0").getQueueId());
        }
    }

    /**
     * Official broker quirk worth emulating: a NEW group with CONSUME_FROM_LAST_OFFSET on a "young" queue (min
     * offset 0, first message still in memory) starts from offset 0 - QUERY_CONSUMER_OFFSET answers 0 instead of
     * "not found" - so it also receives messages sent before it started.
     */
    @Test
    void lastOffsetNewGroupOnYoungQueueStartsFromZero() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            keys.add("old" + i);
            assertSendOk(p.send(msg(topic, "L", "old" + i, "old " + i)));
        }
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, rec);
        for (int i = 0; i < 10; i++) {
            keys.add("new" + i);
            assertSendOk(p.send(msg(topic, "L", "new" + i, "new " + i)));
        }
        awaitAllKeys("young queue from 0", rec, keys);
    }

    /** A committed group offset wins over consumeFromWhere: the group resumes exactly where it stopped. */
    @Test
    void committedOffsetWinsOverConsumeFromWhere() throws Exception {
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        List<String> first = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            first.add("a" + i);
            assertSendOk(p.send(msg(topic, "C", "a" + i, "a" + i)));
        }
        Received rec1 = new Received();
        DefaultMQPushConsumer c1 = startCollecting(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec1);
        awaitAllKeys("first consumer", rec1, first);
        commitOffsetsSync(c1, awaitRoute(topic), 12);
        c1.shutdown();
        List<String> second = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            second.add("b" + i);
            assertSendOk(p.send(msg(topic, "C", "b" + i, "b" + i)));
        }
        Received rec2 = new Received();
        startCollecting(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec2);
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (!rec2.hasAll(second) && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        sleep(QUIET_MS);
        assertTrue(rec2.missing(second).isEmpty(), "missing " + rec2.missing(second));
        long again = first.stream().filter(rec2.byKey::containsKey).count();
        assertEquals(0, again, "already-consumed messages delivered again: " + rec2.byKey.keySet());
    }

    /** viewMessage(offsetMsgId) (VIEW_MESSAGE_BY_ID) and queryMessage by key / by unique key (QUERY_MESSAGE). */
    @Test
    void viewMessageByIdAndQueryByKey() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        String key = "lookup-" + RUN_ID;
        long begin = System.currentTimeMillis() - 60_000;
        SendResult r = p.send(msg(topic, "V", key, "look me up"));
        assertSendOk(r);
        assertSendOk(p.send(msg(topic, "V", "other", "not me")));

        MessageExt byOffsetId = viewByOffsetMsgId(p, topic, r.getOffsetMsgId());
        assertEquals("look me up", body(byOffsetId));
        assertEquals(key, byOffsetId.getKeys());
        assertEquals(topic, byOffsetId.getTopic());

        List<MessageExt> found = new ArrayList<>();
        await("queryMessage by key finds it (index is built asynchronously)", 20_000, () -> {
            try {
                QueryResult q = p.queryMessage(topic, key, 32, begin, System.currentTimeMillis() + 60_000);
                found.clear();
                found.addAll(q.getMessageList());
                return !found.isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        assertEquals(1, found.size(), "by key " + found);
        assertEquals("look me up", body(found.get(0)));

        // by UNIQ_KEY via the index (not producer.viewMessage(topic, id): that first "decodes" the UNIQ_KEY as an
        // offset msgId and connects to the client IP/pid it contains)
        MessageExt byUniq = p.getDefaultMQProducerImpl().queryMessageByUniqKey(topic, r.getMsgId());
        assertNotNull(byUniq);
        assertEquals("look me up", body(byUniq));
        assertEquals(r.getMsgId(), byUniq.getMsgId());
    }

    /** VIEW_MESSAGE_BY_ID for an offset msgId: 4.9.x DefaultMQProducer.viewMessage(id), 5.x MQAdminImpl.viewMessage(topic, id). */
    private static MessageExt viewByOffsetMsgId(DefaultMQProducer p, String topic, String offsetMsgId) throws Exception {
        try {
            return (MessageExt) DefaultMQProducer.class.getMethod("viewMessage", String.class).invoke(p, offsetMsgId);
        } catch (NoSuchMethodException e) {
            Object admin = p.getDefaultMQProducerImpl().getmQClientFactory().getMQAdminImpl();
            return (MessageExt) admin.getClass().getMethod("viewMessage", String.class, String.class)
                .invoke(admin, topic, offsetMsgId);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    /**
     * RECONSUME_LATER with delayLevelWhenNextConsume=1: the broker re-delivers via %RETRY%group after ~1 s, with
     * reconsumeTimes 1, original topic, key, body and msgId (CONSUMER_SEND_MSG_BACK + schedule + retry topic).
     */
    @Test
    void reconsumeLaterRedeliversViaRetryTopic() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        Map<String, SendResult> sent = new HashMap<>();
        for (int i = 0; i < 5; i++) {
            SendResult r = p.send(msg(topic, "Re", "k" + i, "retry " + i));
            assertSendOk(r);
            sent.put("k" + i, r);
        }
        Received firstTry = new Received();
        Received retried = new Received();
        DefaultMQPushConsumer c = pushConsumer(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        // %RETRY%group only gets a route once the broker created it (on heartbeat) and re-registered; the client
        // would see it at its next route poll (default every 30 s) and use it at the next rebalance (every 20 s)
        c.setPollNameServerInterval(1000);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            MessageExt m = msgs.get(0);
            if (m.getReconsumeTimes() == 0) {
                firstTry.add(m);
                ctx.setDelayLevelWhenNextConsume(1);
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            }
            retried.add(m);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        awaitRoute(topic);
        c.start();
        // the first heartbeat makes the broker create %RETRY%group; once the nameserver serves its route, load it
        // and rebalance now instead of at the next periodic rebalance (every 20 s)
        String retryTopic = "%RETRY%" + c.getConsumerGroup();
        awaitRoute(retryTopic);
        c.getDefaultMQPushConsumerImpl().getmQClientFactory().updateTopicRouteInfoFromNameServer(retryTopic);
        c.getDefaultMQPushConsumerImpl().getmQClientFactory().rebalanceImmediately();
        awaitAllKeys("first deliveries", firstTry, sent.keySet());
        awaitAllKeys("re-deliveries", retried, sent.keySet());
        for (Map.Entry<String, SendResult> e : sent.entrySet()) {
            MessageExt m = retried.first(e.getKey());
            assertEquals(1, m.getReconsumeTimes(), "reconsumeTimes of " + e.getKey());
            assertEquals(topic, m.getTopic(), "retry message is mapped back to the original topic");
            assertEquals("retry " + e.getKey().substring(1), body(m));
            assertEquals(e.getValue().getMsgId(), m.getMsgId(), "msgId kept on retry");
        }
    }

    /** Delay level 2 (5 s): not delivered early, delivered to the original topic afterwards. */
    @Test
    void delayLevelMessage() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        assertSendOk(p.send(msg(topic, "D", "create", "create topic")));
        Map<String, Long> deliveredAt = new ConcurrentHashMap<>();
        Received rec = new Received();
        DefaultMQPushConsumer c = pushConsumer(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(m -> {
                deliveredAt.putIfAbsent(m.getKeys(), System.currentTimeMillis());
                rec.add(m);
            });
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        awaitRoute(topic);
        c.start();
        awaitAllKeys("topic creator", rec, List.of("create"));
        Message m = msg(topic, "D", "delayed", "delayed body");
        m.setDelayTimeLevel(2);
        long sentAt = System.currentTimeMillis();
        assertSendOk(p.send(m));
        awaitAllKeys("delayed message", rec, List.of("create", "delayed"));
        long took = deliveredAt.get("delayed") - sentAt;
        System.out.println("[compat] delay level 2 delivered after " + took + " ms");
        assertTrue(took >= 4_000, "delivered too early: " + took + " ms");
        assertEquals(topic, rec.first("delayed").getTopic());
        assertEquals("delayed body", body(rec.first("delayed")));
    }

    /** Transactional messages: COMMIT_MESSAGE is delivered, ROLLBACK_MESSAGE never is. */
    @Test
    void transactionCommitAndRollback() throws Exception {
        String topic = topic();
        // create the topic with a normal message first (half messages go to RMQ_SYS_TRANS_HALF_TOPIC)
        DefaultMQProducer plain = producer();
        assertSendOk(plain.send(msg(topic, "Tx", "plain", "plain")));
        TransactionMQProducer tp = new TransactionMQProducer(group("tx"));
        configureProducer(tp);
        tp.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return (LocalTransactionState) arg;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                return msg.getKeys().startsWith("commit") ? LocalTransactionState.COMMIT_MESSAGE
                    : LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        tp.start();
        onClose(tp::shutdown);
        List<String> committed = new ArrayList<>(List.of("plain"));
        for (int i = 0; i < 3; i++) {
            TransactionSendResult c = tp.sendMessageInTransaction(msg(topic, "Tx", "commit" + i, "commit " + i),
                LocalTransactionState.COMMIT_MESSAGE);
            assertSendOk(c);
            assertEquals(LocalTransactionState.COMMIT_MESSAGE, c.getLocalTransactionState());
            committed.add("commit" + i);
            TransactionSendResult rb = tp.sendMessageInTransaction(msg(topic, "Tx", "rollback" + i, "rollback " + i),
                LocalTransactionState.ROLLBACK_MESSAGE);
            assertSendOk(rb);
            assertEquals(LocalTransactionState.ROLLBACK_MESSAGE, rb.getLocalTransactionState());
        }
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("committed transactional messages", rec, committed);
        sleep(QUIET_MS);
        assertTrue(rec.unexpected(committed).isEmpty(), "rolled back messages delivered: " + rec.unexpected(committed));
        assertEquals("commit 0", body(rec.first("commit0")));
    }
}
