package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * New push consumers on a 16-queue topic, one after another, each in a new group draining the topic from its first
 * offset. At its first rebalance a stock push consumer bumps its subscription version and heartbeats, while its pull
 * thread may already pull with the new version; the broker's answer to such a pull decides whether those queues start
 * at once or after the client's pull back-off. What the broker did is read on the broker's side: the vitest around
 * this scenario (test/integration/consumer-start-java.test.ts) counts the pulls that waited for the heartbeat and the
 * ones refused. Not in the compat matrix (tag "consumerStart"): the official broker refuses them.
 */
@Tag("consumerStart")
public class ConsumerStartTest extends ScenarioBase {
    static final int STARTS = Integer.getInteger("consumerStarts", 12);
    static final int QUEUES = 16;
    static final int PER_QUEUE = 8;

    @Test
    void newConsumersDrainEveryQueue() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        MQClientAPIImpl api = AdminApi.api(p);
        AdminApi.createTopic(api, AdminApi.masterAddr(api), topic, QUEUES, QUEUES, 6);
        List<MessageQueue> mqs = awaitRoute(topic);
        assertEquals(QUEUES, mqs.size(), "queues in the route");
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < QUEUES * PER_QUEUE; i++) batch.add(msg(topic, "t", "k" + i, "body " + i));
        // one batch per queue, so that every queue holds PER_QUEUE messages
        for (int q = 0; q < QUEUES; q++) {
            assertSendOk(p.send(batch.subList(q * PER_QUEUE, (q + 1) * PER_QUEUE), mqs.get(q)));
        }
        for (int s = 0; s < STARTS; s++) {
            AtomicInteger got = new AtomicInteger();
            DefaultMQPushConsumer c = pushConsumer(group("s" + s), topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                got.addAndGet(msgs.size());
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
            await("start " + s + ": all " + QUEUES * PER_QUEUE + " messages", () -> got.get() >= QUEUES * PER_QUEUE);
            c.shutdown();
            assertEquals(QUEUES * PER_QUEUE, got.get(), "start " + s + ": deliveries");
            System.out.println("[consumerStart] start " + s + ": " + got.get() + " delivered");
        }
    }
}
