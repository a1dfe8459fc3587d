// rocketmq-client-java 5.x scenarios against a gRPC endpoint (ours or the official proxy). One scenario per JVM:
//   java -cp 'lib/*:classes' Scenario SCENARIO ENDPOINT TOPIC GROUP
// Prints "RESULT PASS" or "RESULT FAIL <reason>". Compiles against 5.0.2 and 5.2.0 alike (no enableSsl: both
// default to TLS, and 5.0.2 speaks nothing else). Waits are for events; deadlines only bound a broken server.
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

public class Scenario {
    static final ClientServiceProvider P = ClientServiceProvider.loadService();
    static ClientConfiguration cfg;
    static final List<AutoCloseable> CLOSE = new ArrayList<>();

    public static void main(String[] a) {
        String scenario = a[0];
        cfg = ClientConfiguration.newBuilder().setEndpoints(a[1]).setRequestTimeout(Duration.ofSeconds(10)).build();
        String topic = a[2];
        String group = a[3];
        int code = 0;
        try {
            switch (scenario) {
                case "producerConsumer": producerConsumer(topic, group); break;
                case "fifo": fifo(topic, group); break;
                case "delay": delay(topic, group); break;
                case "recall": recall(topic, group); break;
                case "transaction": transaction(topic, group); break;
                case "redelivery": redelivery(topic, group); break;
                case "retryToDlq": retryToDlq(topic, group); break;
                case "pushConsumer": push(topic, group); break;
                default: throw new IllegalArgumentException("unknown scenario " + scenario);
            }
            System.out.println("RESULT PASS");
        } catch (Throwable t) {
            String msg = String.valueOf(t.getMessage()).replace('\n', ' ');
            System.out.println("RESULT FAIL " + t.getClass().getSimpleName() + ": " + msg);
            code = 1;
        } finally {
            for (int i = CLOSE.size() - 1; i >= 0; i--) {
                try { CLOSE.get(i).close(); } catch (Throwable ignored) { }
            }
        }
        System.exit(code);
    }

    static void check(boolean cond, String what) {
        if (!cond) throw new AssertionError(what);
    }

    static String body(MessageView mv) {
        ByteBuffer b = mv.getBody().duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static Producer producer(String topic) throws Exception {
        Producer p = P.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build();
        CLOSE.add(0, p);
        return p;
    }

    static SimpleConsumer simple(String topic, String group, String tag) throws Exception {
        SimpleConsumer c = P.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
            .setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression(tag, FilterExpressionType.TAG))).build();
        CLOSE.add(c);
        return c;
    }

    interface Cond { boolean done() throws Exception; }

    static void until(String what, long ms, Cond c) throws Exception {
        long deadline = System.currentTimeMillis() + ms;
        while (!c.done()) {
            if (System.currentTimeMillis() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(100);
        }
    }

    static void producerConsumer(String topic, String group) throws Exception {
        Producer p = producer(topic);
        SimpleConsumer c = simple(topic, group, "TagA");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Message m = P.newMessageBuilder().setTopic(topic).setTag(i == 4 ? "TagB" : "TagA").setKeys("k" + i)
                .addProperty("n", String.valueOf(i)).setBody(("j" + i).getBytes(StandardCharsets.UTF_8)).build();
            SendReceipt r = p.send(m);
            ids.add(r.getMessageId().toString());
        }
        Map<String, MessageView> got = new ConcurrentHashMap<>();
        until("4 TagA messages", 60_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(15))) {
                check(!got.containsKey(body(mv)), "duplicate " + body(mv));
                got.put(body(mv), mv);
                c.ack(mv);
            }
            return got.size() >= 4;
        });
        for (int i = 0; i < 4; i++) {
            MessageView mv = got.get("j" + i);
            check(mv != null, "missing j" + i);
            check("TagA".equals(mv.getTag().orElse(null)), "tag " + mv.getTag());
            check(mv.getKeys().contains("k" + i), "keys " + mv.getKeys());
            check(String.valueOf(i).equals(mv.getProperties().get("n")), "property n " + mv.getProperties());
            check(mv.getDeliveryAttempt() == 1, "attempt " + mv.getDeliveryAttempt());
            check(ids.get(i).equals(mv.getMessageId().toString()), "message id " + mv.getMessageId() + " vs " + ids.get(i));
        }
        check(c.receive(16, Duration.ofSeconds(15)).isEmpty(), "redelivered after ack");
    }

    static void fifo(String topic, String group) throws Exception {
        Producer p = producer(topic);
        for (int i = 0; i < 4; i++) {
            p.send(P.newMessageBuilder().setTopic(topic).setMessageGroup("jA").setBody(("A" + i).getBytes(StandardCharsets.UTF_8)).build());
            p.send(P.newMessageBuilder().setTopic(topic).setMessageGroup("jB").setBody(("B" + i).getBytes(StandardCharsets.UTF_8)).build());
        }
        SimpleConsumer c = simple(topic, group, "*");
        List<String> a = new CopyOnWriteArrayList<>();
        List<String> b = new CopyOnWriteArrayList<>();
        until("8 messages", 60_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(15))) {
                (body(mv).startsWith("A") ? a : b).add(body(mv));
                c.ack(mv);
            }
            return a.size() + b.size() >= 8;
        });
        check(String.join(",", a).equals("A0,A1,A2,A3") && String.join(",", b).equals("B0,B1,B2,B3"), "order A=" + a + " B=" + b);
    }

    static void delay(String topic, String group) throws Exception {
        Producer p = producer(topic);
        SimpleConsumer c = simple(topic, group, "*");
        long due = System.currentTimeMillis() + 4000;
        p.send(P.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(due).setBody("later".getBytes(StandardCharsets.UTF_8)).build());
        List<MessageView> got = new CopyOnWriteArrayList<>();
        until("the delayed message", 60_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(15))) { got.add(mv); c.ack(mv); }
            return !got.isEmpty();
        });
        check(System.currentTimeMillis() >= due - 1000, "delivered early");
        check(got.get(0).getDeliveryTimestamp().orElse(0L) == due, "delivery timestamp " + got.get(0).getDeliveryTimestamp());
    }

    /**
     * RecallMessage (5.2.0 and later; called through reflection so the file compiles against 5.0.2): the recalled
     * delay message is never delivered, the other one is; the witness, due 2 s later, arrives after their slot was
     * re-put (due order), and then the topic's store holds no copy of the recalled one.
     */
    static void recall(String topic, String group) throws Exception {
        Producer p = producer(topic);
        SimpleConsumer c = simple(topic, group, "*");
        long due = System.currentTimeMillis() + 4000;
        java.lang.reflect.Method handleOf = SendReceipt.class.getMethod("getRecallHandle");
        java.lang.reflect.Method recall = Producer.class.getMethod("recallMessage", String.class, String.class);
        SendReceipt keep = p.send(P.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(due).setBody("keep".getBytes(StandardCharsets.UTF_8)).build());
        SendReceipt drop = p.send(P.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(due).setBody("drop".getBytes(StandardCharsets.UTF_8)).build());
        String handle = (String) handleOf.invoke(drop);
        check(handle != null && !handle.isEmpty(), "no recall handle");
        Object receipt = recall.invoke(p, topic, handle);
        Object recalledId = receipt.getClass().getMethod("getMessageId").invoke(receipt);
        check(drop.getMessageId().toString().equals(String.valueOf(recalledId)), "recall answered " + recalledId + ", want " + drop.getMessageId());
        p.send(P.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(due + 2000).setBody("witness".getBytes(StandardCharsets.UTF_8)).build());
        List<String> got = new CopyOnWriteArrayList<>();
        until("keep and the witness", 60_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(15))) { got.add(body(mv)); c.ack(mv); }
            return got.contains("keep") && got.contains("witness");
        });
        check(!got.contains("drop"), "the recalled message was received: " + got);
        check(keep.getMessageId() != null, "no message id");
    }

    static void transaction(String topic, String group) throws Exception {
        List<String> checked = new CopyOnWriteArrayList<>();
        Producer p = P.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).setTransactionChecker(mv -> {
            checked.add(body(mv));
            return body(mv).equals("commit-on-check") ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
        }).build();
        CLOSE.add(0, p);
        SimpleConsumer c = simple(topic, group, "*");
        Transaction t1 = p.beginTransaction();
        p.send(P.newMessageBuilder().setTopic(topic).setBody("committed".getBytes(StandardCharsets.UTF_8)).build(), t1);
        t1.commit();
        Transaction t2 = p.beginTransaction();
        p.send(P.newMessageBuilder().setTopic(topic).setBody("rolled-back".getBytes(StandardCharsets.UTF_8)).build(), t2);
        t2.rollback();
        p.send(P.newMessageBuilder().setTopic(topic).setBody("commit-on-check".getBytes(StandardCharsets.UTF_8)).build(), p.beginTransaction());
        p.send(P.newMessageBuilder().setTopic(topic).setBody("rollback-on-check".getBytes(StandardCharsets.UTF_8)).build(), p.beginTransaction());
        List<String> got = new CopyOnWriteArrayList<>();
        until("committed + checked-back", 120_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(15))) { got.add(body(mv)); c.ack(mv); }
            return got.size() >= 2 && checked.contains("rollback-on-check");
        });
        List<String> sorted = new ArrayList<>(got);
        Collections.sort(sorted);
        check(sorted.toString().equals("[commit-on-check, committed]"), "delivered " + got);
    }

    static void redelivery(String topic, String group) throws Exception {
        Producer p = producer(topic);
        SimpleConsumer c = simple(topic, group, "*");
        p.send(P.newMessageBuilder().setTopic(topic).setBody("come-back".getBytes(StandardCharsets.UTF_8)).build());
        p.send(P.newMessageBuilder().setTopic(topic).setBody("keep".getBytes(StandardCharsets.UTF_8)).build());
        Map<String, MessageView> first = new ConcurrentHashMap<>();
        until("both", 60_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(10))) first.put(body(mv), mv);
            return first.size() >= 2;
        });
        c.changeInvisibleDuration(first.get("keep"), Duration.ofSeconds(60));
        MessageView[] again = new MessageView[1];
        until("come-back again", 90_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(10))) if (body(mv).equals("come-back")) again[0] = mv;
            return again[0] != null;
        });
        check(again[0].getDeliveryAttempt() == 2, "attempt " + again[0].getDeliveryAttempt());
        c.ack(again[0]);
        c.ack(first.get("keep"));
        check(c.receive(16, Duration.ofSeconds(15)).isEmpty(), "redelivered after ack");
    }

    static void retryToDlq(String topic, String group) throws Exception {
        Producer p = producer(topic);
        SimpleConsumer c = simple(topic, group, "*");
        p.send(P.newMessageBuilder().setTopic(topic).setBody("dead-letter-me".getBytes(StandardCharsets.UTF_8)).build());
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        until("two deliveries", 90_000, () -> {
            for (MessageView mv : c.receive(16, Duration.ofSeconds(10))) attempts.add(mv.getDeliveryAttempt());
            return attempts.size() >= 2;
        });
        check(attempts.toString().equals("[1, 2]"), "attempts " + attempts);
        SimpleConsumer dlq = simple("%DLQ%" + group, group + "_DLQ_READER", "*");
        List<String> dead = new CopyOnWriteArrayList<>();
        until("the DLQ copy", 90_000, () -> {
            check(c.receive(16, Duration.ofSeconds(10)).isEmpty(), "delivered a third time");
            for (MessageView mv : dlq.receive(16, Duration.ofSeconds(15))) { dead.add(body(mv)); dlq.ack(mv); }
            return !dead.isEmpty();
        });
        check(dead.toString().equals("[dead-letter-me]"), "DLQ holds " + dead);
    }

    static void push(String topic, String group) throws Exception {
        Producer p = producer(topic);
        Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
        boolean[] failed = new boolean[1];
        PushConsumer c = P.newPushConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .setMessageListener(mv -> {
                seen.computeIfAbsent(body(mv), k -> new CopyOnWriteArrayList<>()).add(mv.getDeliveryAttempt());
                synchronized (failed) {
                    if (body(mv).equals("push-3") && !failed[0]) {
                        failed[0] = true;
                        return ConsumeResult.FAILURE;
                    }
                }
                return ConsumeResult.SUCCESS;
            }).build();
        CLOSE.add(c);
        for (int i = 0; i < 8; i++) p.send(P.newMessageBuilder().setTopic(topic).setBody(("push-" + i).getBytes(StandardCharsets.UTF_8)).build());
        until("8 and the retry", 120_000, () -> seen.size() == 8 && seen.getOrDefault("push-3", Collections.emptyList()).size() >= 2);
        check(seen.get("push-3").subList(0, 2).toString().equals("[1, 2]"), "attempts " + seen.get("push-3"));
    }
}
