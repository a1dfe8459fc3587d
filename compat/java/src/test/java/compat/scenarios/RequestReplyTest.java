package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.junit.jupiter.api.Test;

/**
 * Request-reply (RPC over RocketMQ, client 4.6+): producer.request() sends a request message, a responder
 * consumer answers with MessageUtil.createReplyMessage, and the broker pushes the reply back to the requester.
 */
public class RequestReplyTest extends ScenarioBase {

    @Test
    void requestReplySyncAndAsync() throws Exception {
        String topic = topic();
        // the topic must exist before the responder subscribes; the replier's send creates it
        DefaultMQProducer replier = producer(group("replier"), null);
        assertSendOk(replier.send(msg(topic, "warm", "warm", "warm-up")));

        DefaultMQPushConsumer responder = pushConsumer(group(), topic, "req", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        AtomicBoolean pinged = new AtomicBoolean();
        responder.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (var m : msgs) {
                if (m.getProperty(MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT) == null) {
                    pinged.set(true); // a plain message, not a request: nothing to answer
                    continue;
                }
                try {
                    String reply = "reply to " + new String(m.getBody(), StandardCharsets.UTF_8);
                    Message r = MessageUtil.createReplyMessage(m, reply.getBytes(StandardCharsets.UTF_8));
                    replier.send(r, 10_000);
                } catch (Exception e) {
                    System.err.println("[compat] reply failed: " + e);
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        awaitRoute(topic);
        responder.start();
        // requests are only answered once the responder owns the topic's queues
        await("responder owns its queues", () -> responder.getDefaultMQPushConsumerImpl().getRebalanceImpl()
            .getProcessQueueTable().keySet().stream().anyMatch(mq -> mq.getTopic().equals(topic)));
        // ... and once its pulls are served. A 5.x consumer whose queues change bumps its subscription version and
        // heartbeats, but that heartbeat is dropped when the scheduled one holds the client's heartbeat lock; the
        // broker then answers SUBSCRIPTION_NOT_LATEST (the official broker too) until the next heartbeat, up to 30 s
        // later, which would outlast a request's timeout. A plain message consumed proves the pulls work.
        assertSendOk(replier.send(msg(topic, "req", "ping", "ping")));
        await("responder consumed a plain message", pinged::get);

        // The broker pushes a reply to the connection its requester registered with a heartbeat. A producer whose first
        // call on a topic is request() fetches the route and heartbeats every broker before sending
        // (DefaultMQProducerImpl.prepareSendRequest); one that had sent to the topic before relies on its scheduled
        // heartbeat, 1 s after start and then every 30 s. A reply that comes before that finds no channel (on the
        // official broker as on ours) and waits for the responder's retry through %RETRY%, at least 10 s later (seen
        // with 4.9.8 on a loaded machine). So the requester starts here and its first call is the request.
        DefaultMQProducer requester = producer();
        for (int i = 0; i < 5; i++) {
            Message req = msg(topic, "req", "rq" + i, "sync-" + i);
            Message reply = requester.request(req, 30_000);
            assertNotNull(reply, "sync reply " + i);
            assertEquals("reply to sync-" + i, new String(reply.getBody(), StandardCharsets.UTF_8));
        }

        int n = 5;
        CountDownLatch done = new CountDownLatch(n);
        Map<String, String> replies = new ConcurrentHashMap<>();
        for (int i = 0; i < n; i++) {
            final String body = "async-" + i;
            requester.request(msg(topic, "req", "ra" + i, body), new RequestCallback() {
                @Override
                public void onSuccess(Message message) {
                    // delivery is at least once: a reply pushed twice (a responder's send retry) may run this twice
                    // on two client threads; count each request once so a missing reply cannot hide behind a duplicate
                    if (replies.putIfAbsent(body, new String(message.getBody(), StandardCharsets.UTF_8)) == null) {
                        done.countDown();
                    } else {
                        System.err.println("[compat] duplicate reply for " + body);
                    }
                }

                @Override
                public void onException(Throwable e) {
                    System.err.println("[compat] async request failed: " + e);
                }
            }, 30_000);
        }
        assertTrue(done.await(60, TimeUnit.SECONDS), "async replies: " + replies);
        for (int i = 0; i < n; i++) {
            assertEquals("reply to async-" + i, replies.get("async-" + i));
        }
    }
}
