package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A push consumer whose subscription version moved without a heartbeat, as when a 5.x client's rebalance loses the
 * heartbeat lock to its scheduled heartbeat (RebalancePushImpl.messageQueueChanged bumps the version, then
 * sendHeartbeatToAllBrokerWithLockV2 finds the lock taken): its pulls then name a version the broker never got.
 * The official broker refuses them with SUBSCRIPTION_NOT_LATEST until the next scheduled heartbeat (30 s by
 * default; apache/rocketmq#3434); ours asks the client for its subscriptions and serves them. The scenario bumps the
 * version the way the rebalance does, with scheduled heartbeats pushed out of reach, and requires the next message
 * within -DrefreshWithinMs (10 s). Not in the compat matrix (tag "subscriptionRefresh"): the official broker fails
 * it; test/integration/subscription-refresh-java.test.ts runs it against ours.
 */
@Tag("subscriptionRefresh")
public class SubscriptionRefreshTest extends ScenarioBase {
    static final long WITHIN_MS = Long.getLong("refreshWithinMs", 10_000L);

    @Test
    void pullsWithAVersionNoHeartbeatBroughtAreServed() throws Exception {
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        // one queue: each pull of it after the bump names the new version (with more, a pull parked before the bump
        // on another queue would take the message)
        MQClientAPIImpl api = AdminApi.api(p);
        AdminApi.createTopic(api, AdminApi.masterAddr(api), topic, 1, 1, 6);
        awaitRoute(topic);
        assertSendOk(p.send(msg(topic, "t", "first", "first")));

        Received rec = new Received();
        DefaultMQPushConsumer c = pushConsumer(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        // no scheduled heartbeat after the start-up ones while the scenario runs
        c.setHeartbeatBrokerInterval(600_000);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(rec::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        awaitRoute(topic);
        c.start();
        awaitAllKeys("the first message", rec, List.of("first"));

        // What messageQueueChanged does to the subscription (SubscriptionData moved packages between 4.9.x and 5.x).
        Map<String, ?> inner = c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getSubscriptionInner();
        Object sd = inner.get(topic);
        assertNotNull(sd, "the consumer's subscription of " + topic);
        long bumped = System.currentTimeMillis() + 1;
        sd.getClass().getMethod("setSubVersion", long.class).invoke(sd, bumped);
        System.out.println("[subscriptionRefresh] group=" + group + " topic=" + topic + " subVersion=" + bumped);

        // The pull sent before the bump may still be parked on the broker with the old version: it takes this one.
        assertSendOk(p.send(msg(topic, "t", "second", "second")));
        awaitAllKeys("the message after the bump", rec, List.of("first", "second"));
        // Every pull from now on names the new version.
        long t0 = System.currentTimeMillis();
        assertSendOk(p.send(msg(topic, "t", "third", "third")));
        awaitAllKeys("a message pulled with the new version", rec, List.of("first", "second", "third"), WITHIN_MS);
        System.out.println("[subscriptionRefresh] delivered with the new version after " + (System.currentTimeMillis() - t0) + " ms");
    }
}
