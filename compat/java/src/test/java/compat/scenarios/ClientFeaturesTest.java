package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Client settings an application may turn on: namespaces, starting from a timestamp, 5.x automatic batching. */
public class ClientFeaturesTest extends ScenarioBase {

    /**
     * A producer and a consumer with a namespace (ClientConfig.setNamespace): the broker sees "ns%topic" and
     * "ns%group" (and "%RETRY%ns%group"); the application sees its own names. A RECONSUME_LATER goes through the
     * namespaced retry topic and comes back.
     */
    @Test
    void namespacedProducerAndConsumer() throws Exception {
        String ns = "ns" + RUN_ID.replaceAll("[^A-Za-z0-9]", "");
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer(group("p"), x -> x.setNamespace(ns));
        MQClientAPIImpl api = AdminApi.api(p);
        AdminApi.createTopic(api, AdminApi.masterAddr(api), ns + "%" + topic, 2, 2, 6);
        awaitRoute(ns + "%" + topic);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            SendResult r = p.send(msg(topic, "T", "ns-" + i, "namespaced " + i));
            assertSendOk(r);
            assertEquals(topic, r.getMessageQueue().getTopic(), "the send result names the topic without the namespace");
            keys.add("ns-" + i);
        }
        // The retry topic exists once the consumer's first heartbeat reaches the broker, after the client's first
        // route lookups: created here, the client finds its route at start, not at its next 30 s route poll.
        AdminApi.createTopic(api, AdminApi.masterAddr(api), "%RETRY%" + ns + "%" + group, 1, 1, 6);
        awaitRoute("%RETRY%" + ns + "%" + group);
        Received rec = new Received();
        Set<String> retried = ConcurrentHashMap.newKeySet();
        // the namespace before subscribe(): the subscription takes the namespaced name when it is made
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamespace(ns);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        onClose(c::shutdown);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                // the first delivery of ns-0 is refused once: it must come back through %RETRY%ns%group
                if (m.getKeys().equals("ns-0") && retried.add(m.getKeys())) {
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
                assertEquals(topic, m.getTopic(), "the consumed message names the topic without the namespace");
                rec.add(m);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        awaitAllKeys("namespaced messages, ns-0 after a retry", rec, keys);
        assertEquals(1, rec.byKey.get("ns-0").size(), "ns-0 delivered once after its retry");
        assertTrue(rec.first("ns-0").getReconsumeTimes() >= 1, "ns-0 came back through the retry topic");
        // the broker knows the group by its namespaced name
        await("the namespaced group's consumer connection", () -> {
            try {
                return !api.getConsumerConnectionList(AdminApi.masterAddr(api), ns + "%" + group, AdminApi.TIMEOUT_MS)
                    .getConnectionSet().isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
    }

    /**
     * CONSUME_FROM_TIMESTAMP on a young queue (min offset 0, its first message still in memory) starts at 0, as
     * CONSUME_FROM_LAST_OFFSET does (lastOffsetNewGroupOnYoungQueueStartsFromZero): the client searches by time only
     * when QUERY_CONSUMER_OFFSET answers "no offset", and for a new group on such a queue the official broker (4.9.8
     * and 5.3.3) answers 0. The messages stored in the second before consumeTimestamp are therefore delivered too.
     */
    @Test
    void newGroupFromTimestampOnYoungQueueStartsFromZero() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        MQClientAPIImpl api = AdminApi.api(p);
        AdminApi.createTopic(api, AdminApi.masterAddr(api), topic, 1, 1, 6);
        awaitRoute(topic);
        List<String> all = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            assertSendOk(p.send(msg(topic, "T", "before-" + i, "before " + i)));
            all.add("before-" + i);
        }
        // consumeTimestamp has a precision of one second: start it at the next full second, after every "before"
        long startMs = (System.currentTimeMillis() / 1000 + 1) * 1000;
        sleep(startMs - System.currentTimeMillis());
        for (int i = 0; i < 5; i++) {
            assertSendOk(p.send(msg(topic, "T", "after-" + i, "after " + i)));
            all.add("after-" + i);
        }
        Received rec = new Received();
        DefaultMQPushConsumer c = pushConsumer(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_TIMESTAMP);
        c.setConsumeTimestamp(UtilAll.timeMillisToHumanString3(startMs));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(rec::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        awaitAllKeys("every message, those before the start time too", rec, all);
        sleep(QUIET_MS);
        assertEquals(all.size(), rec.all.size(), "deliveries (no duplicates)");
    }

    /**
     * 5.x DefaultMQProducer.setAutoBatch(true): the client's ProduceAccumulator gathers messages sent one by one
     * into SEND_BATCH_MESSAGE requests; every callback gets its own message's result, and the consumer gets every
     * message once with its own key and tag.
     */
    @Test
    void autoBatchingProducer() throws Exception {
        java.lang.reflect.Method setAutoBatch;
        try {
            setAutoBatch = DefaultMQProducer.class.getMethod("setAutoBatch", boolean.class);
        } catch (NoSuchMethodException e) {
            Assumptions.abort("this client has no DefaultMQProducer.setAutoBatch (5.x)");
            return;
        }
        String topic = topic();
        DefaultMQProducer p = producer(group("p"), null);
        invoke(setAutoBatch, p, true);
        MQClientAPIImpl api = AdminApi.api(p);
        AdminApi.createTopic(api, AdminApi.masterAddr(api), topic, 2, 2, 6);
        awaitRoute(topic);
        int n = 200;
        CountDownLatch done = new CountDownLatch(n);
        AtomicInteger failed = new AtomicInteger();
        Set<String> msgIds = ConcurrentHashMap.newKeySet();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String key = "ab-" + i;
            keys.add(key);
            p.send(msg(topic, "T" + (i % 3), key, "auto batched " + i), new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    msgIds.add(r.getMsgId());
                    done.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    failed.incrementAndGet();
                    done.countDown();
                }
            });
        }
        assertTrue(done.await(WAIT_MS, TimeUnit.MILLISECONDS), "every callback called");
        assertEquals(0, failed.get(), "failed sends");
        assertEquals(n, msgIds.size(), "one message id per message");
        Received rec = new Received();
        startCollecting(group(), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("auto-batched messages", rec, keys);
        sleep(QUIET_MS);
        assertEquals(n, rec.all.size(), "deliveries (no duplicates)");
        // official 5.3.3 appends the batch's own properties to each message's, UNIQ_KEY included, and that later
        // duplicate wins in the client's property map: every message of a batch is consumed with the batch's id.
        // Ours keeps each message's own id, the one its send callback was given (compat/runner.mjs GAPS).
        boolean ownIds = !"false".equalsIgnoreCase(System.getProperty("autoBatchOwnIds"));
        for (int i = 0; i < n; i++) {
            MessageExt m = rec.first("ab-" + i);
            assertEquals("T" + (i % 3), m.getTags(), "tag of ab-" + i);
            assertEquals("auto batched " + i, body(m), "body of ab-" + i);
            if (ownIds) {
                assertTrue(msgIds.contains(m.getMsgId()), "msgId of ab-" + i + " was answered to its callback");
            }
        }
    }
}
