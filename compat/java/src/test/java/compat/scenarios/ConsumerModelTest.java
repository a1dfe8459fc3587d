package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/** Scenarios 6-8: broadcasting, clustering queue split/rebalance, orderly consumption. */
public class ConsumerModelTest extends ScenarioBase {

    /** 6. Two BROADCASTING consumers (different instanceName) in one group: each gets every message. */
    @Test
    void broadcastingBothConsumersGetAll() throws Exception {
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            keys.add("k" + i);
            assertSendOk(p.send(msg(topic, "Bc", "k" + i, "broadcast " + i)));
        }
        awaitRoute(topic);
        Received r1 = new Received();
        Received r2 = new Received();
        for (Received r : new Received[] {r1, r2}) {
            DefaultMQPushConsumer c = pushConsumer(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            setMessageModel(c, "BROADCASTING");
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                msgs.forEach(r::add);
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
        }
        awaitAllKeys("broadcast consumer 1", r1, keys);
        awaitAllKeys("broadcast consumer 2", r2, keys);
    }

    /** 7. Two CLUSTERING consumers in one group split the 4 queues; both get some messages, union = all. */
    @Test
    void clusteringTwoConsumersSplitQueues() throws Exception {
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        assertSendOk(p.send(msg(topic, "Warm", "warmup", "create topic")));
        awaitRoute(topic);
        Received r1 = new Received();
        Received r2 = new Received();
        DefaultMQPushConsumer c1 = startCollecting(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, r1);
        DefaultMQPushConsumer c2 = startCollecting(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, r2);
        // wait for the rebalance (NOTIFY_CONSUMER_IDS_CHANGED / periodic) to give each consumer a share
        await("both consumers own queues of " + topic, () -> {
            Set<MessageQueue> a = owned(c1, topic);
            Set<MessageQueue> b = owned(c2, topic);
            Set<MessageQueue> u = new HashSet<>(a);
            u.addAll(b);
            return !a.isEmpty() && !b.isEmpty() && a.size() + b.size() == 4 && u.size() == 4;
        });
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            keys.add("k" + i);
            assertSendOk(p.send(msg(topic, "Cl", "k" + i, "cluster " + i)));
        }
        Received union = new Received();
        await("union of both consumers has all 40", () -> {
            Set<String> u = new HashSet<>(r1.byKey.keySet());
            u.addAll(r2.byKey.keySet());
            return u.containsAll(keys);
        });
        r1.all.forEach(union::add);
        r2.all.forEach(union::add);
        keys.add("warmup");
        assertTrue(union.unexpected(keys).isEmpty(), "unexpected " + union.unexpected(keys));
        long n1 = keys.stream().filter(r1.byKey::containsKey).count();
        long n2 = keys.stream().filter(r2.byKey::containsKey).count();
        System.out.println("[compat] clustering split: consumer1=" + n1 + " consumer2=" + n2
            + " queues1=" + owned(c1, topic).size() + " queues2=" + owned(c2, topic).size());
        assertTrue(n1 > 0 && n2 > 0, "both consumers must receive some: " + n1 + "/" + n2);
    }

    private static Set<MessageQueue> owned(DefaultMQPushConsumer c, String topic) {
        Set<MessageQueue> s = new HashSet<>();
        c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().forEach((mq, pq) -> {
            if (mq.getTopic().equals(topic) && !pq.isDropped()) {
                s.add(mq);
            }
        });
        return s;
    }

    /** 8. Orderly: 4 orderIds x 25 steps routed by a MessageQueueSelector; per orderId steps arrive in order. */
    @Test
    void orderlyPerOrderIdSequence() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        int orders = 4;
        int steps = 25;
        Map<Integer, Integer> queueOf = new ConcurrentHashMap<>();
        for (int s = 0; s < steps; s++) {
            for (int o = 0; o < orders; o++) {
                String key = "o" + o + "-s" + s;
                SendResult r = p.send(msg(topic, "Ord", key, o + ":" + s), (mqs, m, arg) -> {
                    int id = (Integer) arg;
                    return mqs.get(id % mqs.size());
                }, o);
                assertSendOk(r);
                Integer prev = queueOf.putIfAbsent(o, r.getMessageQueue().getQueueId());
                assertEquals(prev == null ? r.getMessageQueue().getQueueId() : prev, r.getMessageQueue().getQueueId(),
                    "an orderId must stay on one queue");
            }
        }
        Map<Integer, List<Integer>> seen = new ConcurrentHashMap<>();
        Received rec = new Received();
        DefaultMQPushConsumer c = pushConsumer(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String[] parts = body(m).split(":");
                seen.computeIfAbsent(Integer.parseInt(parts[0]), k -> new CopyOnWriteArrayList<>())
                    .add(Integer.parseInt(parts[1]));
                rec.add(m);
            }
            return ConsumeOrderlyStatus.SUCCESS;
        });
        awaitRoute(topic);
        c.start();
        List<String> keys = new ArrayList<>();
        for (int o = 0; o < orders; o++) {
            for (int s = 0; s < steps; s++) {
                keys.add("o" + o + "-s" + s);
            }
        }
        awaitAllKeys("orderly consumer", rec, keys);
        for (int o = 0; o < orders; o++) {
            List<Integer> l = seen.get(o);
            for (int i = 1; i < l.size(); i++) {
                assertTrue(l.get(i) > l.get(i - 1), "orderId " + o + " out of order: " + l);
            }
            assertEquals(steps, l.size(), "orderId " + o + " steps " + l);
        }
    }
}
