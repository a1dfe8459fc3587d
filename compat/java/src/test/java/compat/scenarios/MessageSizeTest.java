package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Random;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.junit.jupiter.api.Test;

/**
 * The 4 MiB message size limit, as the official brokers (4.9.8 and 5.3.3) enforce it.
 * <p>
 * Two checks meet here: the client refuses a body longer than its maxMessageSize (4 MiB) before sending
 * (MQClientException, code 13 MESSAGE_ILLEGAL), and the broker's store refuses a stored body longer than
 * its maxMessageSize (4 MiB; the whole record may be up to 64 KiB longer) with response code 13 (MQBrokerException).
 * The client checks the body as given but compresses bodies of 4 KiB and more (zlib) afterwards: incompressible
 * random bytes grow by a few hundred bytes, so an exactly-4-MiB random body passes the client check and is then
 * refused by the broker; sent uncompressed it is accepted and consumable.
 */
public class MessageSizeTest extends ScenarioBase {
    static final int FOUR_MIB = 4 * 1024 * 1024;
    static final int MESSAGE_ILLEGAL = 13;

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** "SEND_OK", "client:13" (MQClientException) or "broker:13" (MQBrokerException): what happened to one send. */
    private static String outcome(DefaultMQProducer p, Message m) {
        try {
            SendResult r = p.send(m);
            assertSendOk(r);
            return "SEND_OK";
        } catch (MQClientException e) {
            System.out.println("[compat] client exception: " + e.getResponseCode() + " " + firstLine(e.getErrorMessage()));
            return "client:" + e.getResponseCode();
        } catch (MQBrokerException e) {
            System.out.println("[compat] broker answer: " + e.getResponseCode() + " " + firstLine(e.getErrorMessage()));
            return "broker:" + e.getResponseCode();
        } catch (Exception e) {
            return "other:" + e;
        }
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.split("\n")[0];
    }

    /** A small message first: the topic exists (auto-created) before the big sends, so no answer is about the route. */
    private void createTopic(DefaultMQProducer p, String topic) throws Exception {
        assertSendOk(p.send(msg(topic, "S", "warmup", "warm-up")));
        awaitRoute(topic);
    }

    /** Exactly 4 MiB: accepted when sent uncompressed (and consumed byte for byte); compressed it is refused with 13. */
    @Test
    void body4MiBExactly() throws Exception {
        String topic = topic();
        DefaultMQProducer plain = producer(group("plain"), p -> p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE));
        createTopic(plain, topic);
        byte[] body = random(FOUR_MIB, 4);
        assertEquals("SEND_OK", outcome(plain, new Message(topic, "Big", "exact4m", body)), "uncompressed 4 MiB body");

        // default producer: the 4 MiB random body passes the client check, is compressed to a bit more than 4 MiB
        DefaultMQProducer zipping = producer();
        assertEquals("broker:" + MESSAGE_ILLEGAL, outcome(zipping, new Message(topic, "Big", "exact4mzip", random(FOUR_MIB, 5))),
            "4 MiB random body compressed beyond 4 MiB");

        Received rec = new Received();
        startCollecting(group(), topic, "Big", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("4 MiB message", rec, List.of("exact4m"));
        assertArrayEquals(body, rec.first("exact4m").getBody(), "body of the 4 MiB message");
    }

    /** 4 MiB + 1: the client refuses it before sending (MQClientException 13). */
    @Test
    void body4MiBPlusOneRefusedByClient() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        createTopic(p, topic);
        assertEquals("client:" + MESSAGE_ILLEGAL, outcome(p, new Message(topic, "Big", "over", random(FOUR_MIB + 1, 6))));
    }

    /** 4 MiB + 1 with the client limit raised: the broker refuses it (response code 13, also when compressed). */
    @Test
    void body4MiBPlusOneRefusedByBroker() throws Exception {
        String topic = topic();
        DefaultMQProducer plain = producer(group("plain"), p -> {
            p.setMaxMessageSize(2 * FOUR_MIB);
            p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE);
        });
        createTopic(plain, topic);
        assertEquals("broker:" + MESSAGE_ILLEGAL, outcome(plain, new Message(topic, "Big", "over", random(FOUR_MIB + 1, 7))),
            "uncompressed 4 MiB + 1");
        DefaultMQProducer zipping = producer(group("zip"), p -> p.setMaxMessageSize(2 * FOUR_MIB));
        assertEquals("broker:" + MESSAGE_ILLEGAL, outcome(zipping, new Message(topic, "Big", "overzip", random(FOUR_MIB + 1, 8))),
            "compressed 4 MiB + 1");
        // the broker still works after refusing
        assertSendOk(plain.send(msg(topic, "S", "after", "after")));
    }
}
