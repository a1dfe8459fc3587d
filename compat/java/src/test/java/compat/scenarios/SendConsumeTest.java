package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientExt;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/** Scenarios 1-5: the four send styles and tag filtering, each followed by a clustering push consumer. */
public class SendConsumeTest extends ScenarioBase {

    /** 1. Sync send of 100 messages with tags + keys; a push consumer from the first offset gets every one. */
    @Test
    void syncSend100ThenPushConsumeAll() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        Map<String, SendResult> results = new LinkedHashMap<>();
        Map<String, Message> sent = new LinkedHashMap<>();
        for (int i = 0; i < 100; i++) {
            String key = "k" + i;
            Message m = msg(topic, i % 2 == 0 ? "TagA" : "TagB", key, "sync body " + i);
            m.putUserProperty("seq", Integer.toString(i));
            SendResult r = p.send(m);
            assertSendOk(r);
            results.put(key, r);
            sent.put(key, m);
        }
        // per queue the logical offsets handed out must be consecutive
        Map<Integer, List<Long>> perQueue = new HashMap<>();
        results.values().forEach(r -> perQueue.computeIfAbsent(r.getMessageQueue().getQueueId(), q -> new ArrayList<>())
            .add(r.getQueueOffset()));
        perQueue.forEach((q, offs) -> {
            for (int i = 1; i < offs.size(); i++) {
                assertEquals(offs.get(i - 1) + 1, (long) offs.get(i), "queue " + q + " offsets " + offs);
            }
        });

        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("push consumer", rec, sent.keySet());

        for (Map.Entry<String, Message> e : sent.entrySet()) {
            MessageExt got = rec.first(e.getKey());
            Message m = e.getValue();
            SendResult r = results.get(e.getKey());
            assertEquals(topic, got.getTopic());
            assertEquals(m.getTags(), got.getTags());
            assertEquals(m.getKeys(), got.getKeys());
            assertEquals(new String(m.getBody(), "UTF-8"), body(got));
            assertEquals(m.getUserProperty("seq"), got.getUserProperty("seq"));
            assertEquals(r.getMsgId(), got.getMsgId(), "UNIQ_KEY msgId of " + e.getKey());
            assertEquals(r.getOffsetMsgId(), ((MessageClientExt) got).getOffsetMsgId(), "offsetMsgId of " + e.getKey());
            assertEquals(r.getMessageQueue().getQueueId(), got.getQueueId(), "queueId of " + e.getKey());
            assertEquals(r.getQueueOffset(), got.getQueueOffset(), "queueOffset of " + e.getKey());
            assertEquals(0, got.getReconsumeTimes());
            assertTrue(got.getStoreTimestamp() >= got.getBornTimestamp() - 1000, "store/born timestamps");
            assertNotNull(got.getStoreHost());
            assertNotNull(got.getBornHost());
        }
    }

    /** 2. Async send (SendCallback) of 100 messages: all acknowledged with SEND_OK, then all consumed. */
    @Test
    void asyncSend100ThenConsumeAll() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        // create the topic first with one sync send so 100 concurrent first-sends don't all race auto-creation
        SendResult first = p.send(msg(topic, "T", "k-first", "first"));
        assertSendOk(first);
        keys.add("k-first");
        CountDownLatch latch = new CountDownLatch(100);
        Map<String, Object> outcome = new ConcurrentHashMap<>();
        for (int i = 0; i < 100; i++) {
            String key = "k" + i;
            keys.add(key);
            p.send(msg(topic, "Async", key, "async body " + i), new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    outcome.put(key, r);
                    latch.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    outcome.put(key, e);
                    latch.countDown();
                }
            });
        }
        assertTrue(latch.await(WAIT_MS, TimeUnit.MILLISECONDS), "async callbacks: " + outcome.size() + "/100");
        outcome.forEach((k, v) -> {
            assertTrue(v instanceof SendResult, k + " failed: " + v);
            assertEquals(SendStatus.SEND_OK, ((SendResult) v).getSendStatus(), k);
        });

        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("push consumer", rec, keys);
        for (int i = 0; i < 100; i++) {
            assertEquals("async body " + i, body(rec.first("k" + i)));
        }
    }

    /** 3. Oneway send of 50 messages (no response at all), then all consumed. */
    @Test
    void oneway50ThenConsumeAll() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String key = "k" + i;
            keys.add(key);
            p.sendOneway(msg(topic, "Oneway", key, "oneway body " + i));
        }
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("push consumer", rec, keys);
        for (int i = 0; i < 50; i++) {
            assertEquals("oneway body " + i, body(rec.first("k" + i)));
        }
    }

    /** 4. One batch send of 32 messages (SEND_BATCH_MESSAGE): SEND_OK, consecutive offsets in one queue, all consumed. */
    @Test
    void batch32ThenConsumeAll() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        // first send to a brand-new topic: the batch itself triggers auto-creation
        List<Message> batch = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            String key = "k" + i;
            keys.add(key);
            Message m = msg(topic, "Batch", key, "batch body " + i);
            m.putUserProperty("idx", Integer.toString(i));
            batch.add(m);
        }
        SendResult r = p.send(batch);

        assertEquals(32, r.getMsgId().split(",").length, "batch msgIds: " + r.getMsgId());

        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("push consumer", rec, keys);
        String[] ids = r.getMsgId().split(",");
        List<String> receivedIds = new ArrayList<>();

        for (int i = 0; i < 32; i++) {
            MessageExt got = rec.first("k" + i);
            assertEquals("batch body " + i, body(got));
            assertEquals("Batch", got.getTags());
            assertEquals(Integer.toString(i), got.getUserProperty("idx"));
            assertEquals(r.getMessageQueue().getQueueId(), got.getQueueId(), "batch lands in one queue");
            assertEquals(r.getQueueOffset() + i, got.getQueueOffset(), "consecutive offsets in the batch");
            assertEquals(batch.get(i).getProperty("UNIQ_KEY"), ids[i], "SendResult lists the inner UNIQ_KEYs in order");
            receivedIds.add(got.getMsgId());
        }
        // Official behaviour differs by version: 4.9.x stores each inner message with its own UNIQ_KEY (consumer
        // msgId == SendResult id). A 5.x client also puts the batch's own UNIQ_KEY into the request-header
        // properties, and a 5.x broker appends those to every inner message, so all 32 are consumed with that one
        // batch-level msgId. Accept either form.
        java.util.Set<String> distinctIds = new java.util.HashSet<>(receivedIds);
        boolean perMessage = java.util.Arrays.asList(ids).equals(receivedIds);
        boolean batchLevel = distinctIds.size() == 1 && !java.util.Arrays.asList(ids).contains(receivedIds.get(0));
        if (batchLevel) {
            System.out.println("[compat] batch: all inner messages consumed with the batch-level UNIQ_KEY " + receivedIds.get(0));
        }
        assertTrue(perMessage || batchLevel, "consumed msgIds " + receivedIds + " vs SendResult " + r.getMsgId());
    }

    /** 5. Tag filtering: tags A, B, C sent; a consumer subscribed to "A || C" gets all A and C and never B. */
    @Test
    void tagFilterAorC() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String tag = "ABC".substring(i % 3, i % 3 + 1);
            String key = tag + i;
            assertSendOk(p.send(msg(topic, tag, key, "tag " + tag + " " + i)));
            if (!tag.equals("B")) {
                want.add(key);
            }
        }
        Received rec = new Received();
        startCollecting(group(), topic, "A || C", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("A||C consumer", rec, want);
        sleep(QUIET_MS);
        for (MessageExt m : rec.all) {
            assertTrue(m.getTags().equals("A") || m.getTags().equals("C"), "got tag " + m.getTags());
        }
        assertEquals(20, rec.distinct());
        assertNull(rec.first("B1"));
    }
}
