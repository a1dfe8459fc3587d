package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/**
 * A listener that always answers RECONSUME_LATER sees the message again with reconsumeTimes 1, 2, ... and,
 * past maxReconsumeTimes, the message lands in %DLQ%group, readable there with its original id and body.
 * The client asks for delay level 1 on each retry so the scenario does not wait for the 10 s / 30 s ladder.
 */
public class RetryDlqTest extends ScenarioBase {

    @Test
    void reconsumeLaterUntilDeadLetterQueue() throws Exception {
        String topic = topic();
        String group = group();
        DefaultMQProducer p = producer();
        SendResult sent = p.send(msg(topic, "Dl", "dead", "dead letter body"));
        assertSendOk(sent);

        List<Integer> attempts = new CopyOnWriteArrayList<>();
        Map<Integer, Long> attemptAt = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c = pushConsumer(group, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setMaxReconsumeTimes(2);
        c.setPollNameServerInterval(1000);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                attempts.add(m.getReconsumeTimes());
                attemptAt.putIfAbsent(m.getReconsumeTimes(), System.currentTimeMillis());
                assertEquals(sent.getMsgId(), m.getMsgId());
            }
            ctx.setDelayLevelWhenNextConsume(1);
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        awaitRoute(topic);
        c.start();
        String retryTopic = "%RETRY%" + group;
        awaitRoute(retryTopic);
        c.getDefaultMQPushConsumerImpl().getmQClientFactory().updateTopicRouteInfoFromNameServer(retryTopic);
        c.getDefaultMQPushConsumerImpl().getmQClientFactory().rebalanceImmediately();

        await("attempts 0, 1 and 2", 90_000, () -> attempts.containsAll(List.of(0, 1, 2)));
        assertTrue(attemptAt.get(1) - attemptAt.get(0) >= 900, "retry 1 came too early");
        assertTrue(attemptAt.get(2) - attemptAt.get(1) >= 900, "retry 2 came too early");

        String dlq = "%DLQ%" + group;
        List<MessageQueue> dlqQueues = awaitRoute(dlq);
        // read it with plain PULL_MESSAGE (11): the 5.x DefaultLitePullConsumer pulls with LITE_PULL_MESSAGE (361),
        // which 4.9.x brokers do not know, and this scenario is about the retry/DLQ path, not lite pull
        DefaultMQPullConsumer reader = new DefaultMQPullConsumer(group("dlqreader"));
        reader.setNamesrvAddr(NAMESRV);
        reader.setInstanceName(instanceName());
        reader.setVipChannelEnabled(false);
        reader.start();
        onClose(reader::shutdown);
        List<MessageExt> dead = new CopyOnWriteArrayList<>();
        await("the message in " + dlq, 30_000, () -> {
            for (MessageQueue mq : dlqQueues) {
                try {
                    PullResult r = reader.pull(mq, "*", 0, 32);
                    if (r.getPullStatus() == PullStatus.FOUND) {
                        dead.addAll(r.getMsgFoundList());
                    }
                } catch (Exception e) {
                    System.err.println("[compat] pull " + mq + ": " + e);
                }
            }
            return !dead.isEmpty();
        });
        MessageExt d = dead.get(0);
        assertEquals("dead letter body", body(d));
        assertEquals("dead", d.getKeys());
        assertEquals(sent.getMsgId(), d.getMsgId(), "the dead letter keeps the message id");
        assertEquals(3, d.getReconsumeTimes(), "reconsumeTimes of the dead letter");
        sleep(2000);
        assertEquals(List.of(0, 1, 2), attempts.stream().distinct().sorted().toList(), "no delivery after the DLQ");
    }
}
