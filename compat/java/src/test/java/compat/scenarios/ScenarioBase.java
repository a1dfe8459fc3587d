package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * Shared plumbing for the scenarios. Everything talks to the nameserver given by -Dnamesrv=host:port.
 * Topic/group names are unique per JVM run (-DrunId=... to fix the suffix), so repeated runs against the same
 * broker do not interfere.
 */
public abstract class ScenarioBase {
    public static final String NAMESRV = System.getProperty("namesrv", "127.0.0.1:9876");
    public static final String RUN_ID = System.getProperty("runId",
        Long.toString(System.currentTimeMillis() / 1000 % 100_000_000L, 36)
            + Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36 * 36), 36));
    /** How long a scenario waits for an expected outcome before failing. */
    public static final long WAIT_MS = Long.getLong("scenarioWaitMs", 60_000L);
    /** How long a scenario keeps listening after success to catch unexpected extra deliveries. */
    public static final long QUIET_MS = Long.getLong("quietMs", 2_000L);

    private static final AtomicInteger INSTANCE_SEQ = new AtomicInteger();
    private final List<Runnable> closers = new CopyOnWriteArrayList<>();
    protected String scenario;

    @BeforeEach
    void rememberName(TestInfo info) {
        scenario = info.getTestMethod().map(m -> m.getName()).orElse("scenario");
    }

    @AfterEach
    void closeClients() {
        List<Runnable> l = new ArrayList<>(closers);
        closers.clear();
        for (int i = l.size() - 1; i >= 0; i--) {
            try {
                l.get(i).run();
            } catch (Throwable t) {
                System.err.println("[compat] close failed: " + t);
            }
        }
    }

    // ------------------------------------------------------------------ names

    /** Topic names allow only [%|a-zA-Z0-9_-] and at most 127 chars. */
    protected String topic(String suffix) {
        return clip("ct_" + scenario + (suffix.isEmpty() ? "" : "_" + suffix) + "_" + RUN_ID);
    }

    protected String topic() {
        return topic("");
    }

    protected String group(String suffix) {
        return clip("cg_" + scenario + (suffix.isEmpty() ? "" : "_" + suffix) + "_" + RUN_ID);
    }

    protected String group() {
        return group("");
    }

    private static String clip(String s) {
        return s.length() > 100 ? s.substring(0, 90) + Integer.toHexString(s.hashCode()) : s;
    }

    protected static String instanceName() {
        return "compat-" + RUN_ID + "-" + INSTANCE_SEQ.incrementAndGet();
    }

    // ------------------------------------------------------------------ clients

    protected DefaultMQProducer producer() throws Exception {
        return producer(group("p"), null);
    }

    protected DefaultMQProducer producer(String group, Consumer<DefaultMQProducer> customize) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group);
        configureProducer(p);
        if (customize != null) {
            customize.accept(p);
        }
        p.start();
        closers.add(p::shutdown);
        return p;
    }

    protected static void configureProducer(DefaultMQProducer p) {
        p.setNamesrvAddr(NAMESRV);
        p.setInstanceName(instanceName());
        p.setSendMsgTimeout(10_000);
        p.setVipChannelEnabled(false);
    }

    /** Push consumer, not started yet (caller may tweak it), closed after the test. */
    protected DefaultMQPushConsumer pushConsumer(String group, String topic, String expression,
                                                 ConsumeFromWhere from) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        c.setConsumeFromWhere(from);
        c.subscribe(topic, expression);
        c.setConsumeThreadMin(4);
        c.setConsumeThreadMax(4);
        closers.add(c::shutdown);
        return c;
    }

    /** Push consumer (clustering) that records everything into {@code sink}; started. */
    protected DefaultMQPushConsumer startCollecting(String group, String topic, String expression,
                                                    ConsumeFromWhere from, Received sink) throws Exception {
        DefaultMQPushConsumer c = pushConsumer(group, topic, expression, from);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(sink::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        awaitRoute(topic);
        c.start();
        return c;
    }

    // ------------------------------------------------------------------ broker features

    /**
     * Skips the scenario (JUnit "aborted", reported as SKIP with the reason) when the harness says the broker lacks
     * a feature: {@code -D<property>=false}. compat/runner.mjs passes these for known official-broker gaps.
     */
    protected static void requireFeature(String property, String what) {
        Assumptions.assumeFalse("false".equalsIgnoreCase(System.getProperty(property)), "-D" + property + "=false: " + what);
    }

    /** The 5.x DefaultLitePullConsumer pulls with LITE_PULL_MESSAGE (361); 4.9.x brokers answer "not supported". */
    protected static void requireLitePullMessage() {
        requireFeature("litePullMessage",
            "the broker does not know LITE_PULL_MESSAGE (361), which the 5.x DefaultLitePullConsumer pulls with");
    }

    protected DefaultLitePullConsumer litePullConsumer(String group) throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        closers.add(c::shutdown);
        return c;
    }

    /**
     * MessageModel moved packages between 4.9.x (common.protocol.heartbeat) and 5.x (remoting.protocol.heartbeat);
     * set it reflectively so the scenarios compile against both client lines.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    protected static void setMessageModel(Object consumer, String model) {
        try {
            for (java.lang.reflect.Method m : consumer.getClass().getMethods()) {
                if (m.getName().equals("setMessageModel") && m.getParameterCount() == 1) {
                    Class<? extends Enum> t = (Class<? extends Enum>) m.getParameterTypes()[0];
                    m.invoke(consumer, Enum.valueOf(t, model));
                    return;
                }
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
        throw new IllegalStateException("no setMessageModel on " + consumer.getClass());
    }

    /**
     * Waits until the consumer's in-memory offsets for {@code topic} add up to {@code expected}, then commits them
     * with one synchronous UPDATE_CONSUMER_OFFSET per queue, one after the other.
     * <p>
     * Why not just rely on shutdown()'s oneway commits: the official broker (4.9.x and 5.x
     * ConsumerOffsetManager.commitOffset) creates the per-"topic@group" map without synchronisation, so the FIRST
     * commits of a new group, arriving concurrently (persistAll sends one oneway per queue back to back), can
     * overwrite each other and lose whole queues - then the group re-consumes that queue from 0. Committing
     * sequentially once makes the later (concurrent) commits safe.
     */
    protected static void commitOffsetsSync(org.apache.rocketmq.client.consumer.DefaultMQPushConsumer c,
                                            List<MessageQueue> mqs, long expected) throws Exception {
        org.apache.rocketmq.client.consumer.store.OffsetStore store = c.getDefaultMQPushConsumerImpl().getOffsetStore();
        await("consumer offsets add up to " + expected, () -> {
            long sum = 0;
            for (MessageQueue mq : mqs) {
                sum += Math.max(0, store.readOffset(mq, org.apache.rocketmq.client.consumer.store.ReadOffsetType.READ_FROM_MEMORY));
            }
            return sum == expected;
        });
        for (MessageQueue mq : mqs) {
            long off = store.readOffset(mq, org.apache.rocketmq.client.consumer.store.ReadOffsetType.READ_FROM_MEMORY);
            if (off >= 0) {
                store.updateConsumeOffsetToBroker(mq, off, false);
            }
        }
    }

    /** Registers an extra cleanup action (run in reverse order after the test). */
    protected void onClose(Runnable r) {
        closers.add(r);
    }

    private DefaultMQProducer routeProbe;

    /**
     * Waits until the nameserver serves a route for {@code topic}. Consumers started before that would only see
     * the topic at their next 30 s route poll.
     */
    protected List<MessageQueue> awaitRoute(String topic) throws Exception {
        if (routeProbe == null) {
            routeProbe = producer(group("probe"), null);
        }
        long deadline = System.currentTimeMillis() + WAIT_MS;
        Throwable last = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                List<MessageQueue> mqs = routeProbe.fetchPublishMessageQueues(topic);
                if (mqs != null && !mqs.isEmpty()) {
                    return mqs;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(100);
        }
        fail("no route for topic " + topic + " after " + WAIT_MS + " ms: " + last);
        return null;
    }

    // ------------------------------------------------------------------ messages

    protected static Message msg(String topic, String tag, String key, String body) {
        Message m = new Message(topic, tag, key, body.getBytes(StandardCharsets.UTF_8));
        return m;
    }

    protected static String body(MessageExt m) {
        return new String(m.getBody(), StandardCharsets.UTF_8);
    }

    protected static void assertSendOk(SendResult r) {
        assertEquals(SendStatus.SEND_OK, r.getSendStatus(), "send status of " + r);
        assertTrue(r.getMsgId() != null && !r.getMsgId().isEmpty(), "msgId in " + r);
        assertTrue(r.getMessageQueue() != null, "queue in " + r);
        assertTrue(r.getQueueOffset() >= 0, "queueOffset in " + r);
    }

    // ------------------------------------------------------------------ waiting

    protected static void await(String what, BooleanSupplier cond) throws InterruptedException {
        await(what, WAIT_MS, cond);
    }

    protected static void await(String what, long timeoutMs, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) {
                fail("timed out after " + timeoutMs + " ms waiting for: " + what);
            }
            Thread.sleep(50);
        }
    }

    /**
     * Calls a method found by reflection (one newer clients have, so the file compiles against both client lines)
     * and rethrows what it threw, not the InvocationTargetException around it.
     */
    protected static Object invoke(java.lang.reflect.Method m, Object target, Object... args) throws Exception {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof Exception) throw (Exception) e.getCause();
            throw e;
        }
    }

    protected static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RuntimeException(e);
        }
    }

    /** Thread-safe record of delivered messages, keyed by the message's (first) key. */
    public static final class Received {
        public final Map<String, List<MessageExt>> byKey = new ConcurrentHashMap<>();
        public final List<MessageExt> all = new CopyOnWriteArrayList<>();

        public void add(MessageExt m) {
            all.add(m);
            String k = m.getKeys() == null ? "<nokey>" : m.getKeys().split(" ")[0];
            byKey.computeIfAbsent(k, x -> new CopyOnWriteArrayList<>()).add(m);
        }

        public boolean hasAll(Collection<String> keys) {
            return byKey.keySet().containsAll(keys);
        }

        public int distinct() {
            return byKey.size();
        }

        public int duplicates() {
            return all.size() - byKey.size();
        }

        public MessageExt first(String key) {
            List<MessageExt> l = byKey.get(key);
            return l == null || l.isEmpty() ? null : l.get(0);
        }

        public Set<String> missing(Collection<String> keys) {
            Set<String> s = new TreeSet<>(keys);
            s.removeAll(byKey.keySet());
            return s;
        }

        public Set<String> unexpected(Collection<String> keys) {
            Set<String> s = new TreeSet<>(byKey.keySet());
            s.removeAll(keys);
            return s;
        }
    }

    /** Waits until {@code r} holds every key, then fails on unexpected keys; logs duplicates. */
    protected static void awaitAllKeys(String what, Received r, Collection<String> keys) throws InterruptedException {
        awaitAllKeys(what, r, keys, WAIT_MS);
    }

    /** Like {@link #awaitAllKeys(String, Received, Collection)}; waitMs 0 = check now (caller already waited). */
    protected static void awaitAllKeys(String what, Received r, Collection<String> keys, long waitMs)
        throws InterruptedException {
        long deadline = System.currentTimeMillis() + waitMs;
        while (!r.hasAll(keys)) {
            if (System.currentTimeMillis() > deadline) {
                Set<String> miss = r.missing(keys);
                fail(what + ": after " + waitMs + " ms received " + (keys.size() - miss.size()) + "/" + keys.size()
                    + ", missing e.g. " + new ArrayList<>(miss).subList(0, Math.min(5, miss.size())));
            }
            Thread.sleep(50);
        }
        Set<String> extra = r.unexpected(keys);
        assertTrue(extra.isEmpty(), what + ": unexpected keys " + extra);
        if (r.duplicates() > 0) {
            System.out.println("[compat] " + what + ": " + r.duplicates() + " duplicate deliveries (at-least-once)");
        }
    }
}
