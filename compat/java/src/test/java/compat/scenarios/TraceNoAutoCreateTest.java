package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Message traces on a broker started with autoCreateTopicEnable=false and traceTopicEnable=true (tag "noAutoCreate":
 * compat/runner.mjs starts its side servers so): the trace topic exists from the start (Java TopicConfigManager: one
 * read and one write queue, a system topic), so tracing works although no topic is created on a send.
 */
@Tag("noAutoCreate")
public class TraceNoAutoCreateTest extends ScenarioBase {
    @Test
    void traceTopicWithoutAutoCreate() throws Exception {
        TraceTest.requireMsgRegion();
        Assumptions.assumeTrue("false".equals(System.getProperty("autoCreateTopicEnable")),
            "needs a broker with autoCreateTopicEnable=false and traceTopicEnable=true (run by compat/runner.mjs)");
        List<MessageQueue> mqs = awaitRoute(TraceTest.TRACE_TOPIC);
        assertEquals(1, mqs.size(), "write queues of the trace topic " + mqs);
        TraceTest.tracedRoundTrip(this);
    }
}
