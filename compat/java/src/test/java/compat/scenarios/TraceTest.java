package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.trace.TraceBean;
import org.apache.rocketmq.client.trace.TraceContext;
import org.apache.rocketmq.client.trace.TraceDataEncoder;
import org.apache.rocketmq.client.trace.TraceType;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.junit.jupiter.api.Test;

/**
 * Message traces (the clients' enableMsgTrace): a stock producer and push consumer with tracing on send their trace
 * records to the trace topic through the broker, and the traces are found again as mqadmin queryMsgTraceById finds
 * them: a key query of the trace topic for the message id, the bodies decoded by the client's TraceDataEncoder.
 * TraceNoAutoCreateTest does the same on a broker started with autoCreateTopicEnable=false and traceTopicEnable=true.
 */
public class TraceTest extends ScenarioBase {
    static final String TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC";

    @Test
    void producerAndConsumerTracesAreFoundByMessageId() throws Exception {
        requireMsgRegion();
        tracedRoundTrip(this);
    }

    /**
     * The 5.x client sends a consume trace only for messages with a MSG_REGION property, which a 5.x broker puts on
     * every message it stores and a 4.9.x broker (without a send hook) on none: compat/runner.mjs passes
     * -DmsgRegion=false for 5.x clients against official 4.9.x.
     */
    static void requireMsgRegion() {
        requireFeature("msgRegion", "the broker stores no MSG_REGION, so this client sends no consume traces");
    }

    /** Traced sends and consumption, then every message's three trace records (TraceNoAutoCreateTest uses it too). */
    static void tracedRoundTrip(ScenarioBase s) throws Exception {
        String topic = s.topic();
        String consumerGroup = s.group("c");
        DefaultMQProducer p = new DefaultMQProducer(s.group("p"), true, null);
        configureProducer(p);
        p.start();
        s.onClose(p::shutdown);
        MQClientAPIImpl api = AdminApi.api(p);
        AdminApi.createTopic(api, AdminApi.masterAddr(api), topic, 2, 2, 6);
        s.awaitRoute(topic);

        List<String> msgIds = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            SendResult r = p.send(msg(topic, "T", "trace-" + i, "traced " + i));
            assertSendOk(r);
            msgIds.add(r.getMsgId());
        }

        Received rec = new Received();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(consumerGroup, true, null);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            msgs.forEach(rec::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        s.onClose(c::shutdown);
        awaitAllKeys("traced messages", rec, List.of("trace-0", "trace-1", "trace-2"));

        // the dispatchers send their batches asynchronously: wait until each message has all three records
        long begin = System.currentTimeMillis() - 3_600_000L;
        for (String msgId : msgIds) {
            long deadline = System.currentTimeMillis() + WAIT_MS;
            Set<String> seen = new HashSet<>();
            while (true) {
                seen = traceTypes(p, msgId, topic, consumerGroup, begin);
                if (seen.containsAll(Set.of("Pub", "SubBefore", "SubAfter"))) break;
                if (System.currentTimeMillis() > deadline) fail("traces of " + msgId + ": only " + seen);
                sleep(200);
            }
            System.out.println("[compat] traces of " + msgId + ": " + seen);
        }
    }

    /** The trace types recorded for msgId: a key query of the trace topic, as mqadmin queryMsgTraceById does. */
    private static Set<String> traceTypes(DefaultMQProducer p, String msgId, String topic, String group, long begin) {
        Set<String> types = new HashSet<>();
        List<MessageExt> found;
        try {
            found = p.queryMessage(TRACE_TOPIC, msgId, 64, begin, System.currentTimeMillis() + 60_000L).getMessageList();
        } catch (Exception e) {
            return types; // nothing indexed yet: the broker answers "not found"
        }
        for (MessageExt m : found) {
            for (TraceContext ctx : TraceDataEncoder.decoderFromTraceDataString(body(m))) {
                for (TraceBean b : ctx.getTraceBeans()) {
                    if (!msgId.equals(b.getMsgId())) continue;
                    if (ctx.getTraceType() == TraceType.Pub) {
                        // the consume records carry no topic (TraceDataEncoder's SubBefore / SubAfter layouts)
                        assertEquals(topic, b.getTopic(), "topic in the send trace of " + msgId);
                    } else {
                        assertEquals(group, ctx.getGroupName(), "group in a consume trace of " + msgId);
                    }
                    assertTrue(ctx.isSuccess(), "a failed " + ctx.getTraceType() + " trace of " + msgId);
                    types.add(ctx.getTraceType().name());
                }
            }
        }
        return types;
    }
}
