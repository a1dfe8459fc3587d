package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A broker started with autoCreateTopicEnable=false (tag "noAutoCreate", not part of "all": compat/runner.mjs
 * starts a separate server with that setting and passes -DautoCreateTopicEnable=false).
 * <p>
 * Official behaviour (4.9.8 and 5.3.3): such a broker does not create or register the default topic TBW102, so the
 * producer finds no route for an unknown topic, neither its own nor the default one, and fails before sending
 * anything: MQClientException "No route info of this topic: ..." with response code 10005
 * (ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION). A topic created with UPDATE_AND_CREATE_TOPIC works.
 */
@Tag("noAutoCreate")
public class NoAutoCreateTopicTest extends ScenarioBase {
    static final int NOT_FOUND_TOPIC_EXCEPTION = 10005;

    @Test
    void sendToUnknownTopicFailsWithoutAutoCreate() throws Exception {
        Assumptions.assumeTrue("false".equals(System.getProperty("autoCreateTopicEnable")),
            "needs a broker with autoCreateTopicEnable=false and -DautoCreateTopicEnable=false (run by compat/runner.mjs)");
        DefaultMQProducer p = producer(group("p"), x -> x.setRetryTimesWhenSendFailed(0));
        String unknown = topic("unknown");
        MQClientException e = assertThrows(MQClientException.class, () -> p.send(msg(unknown, "T", "k", "never stored")),
            "send to a topic that does not exist on a broker with autoCreateTopicEnable=false");
        System.out.println("[compat] unknown topic: code " + e.getResponseCode() + " " + e.getErrorMessage().split("\n")[0]);
        assertEquals(NOT_FOUND_TOPIC_EXCEPTION, e.getResponseCode(), "response code of " + e);
        assertTrue(e.getErrorMessage().startsWith("No route info of this topic: " + unknown), e.getErrorMessage());

        // the default topic is not served either
        MQClientAPIImpl api = AdminApi.api(p);
        assertThrows(MQClientException.class, () -> api.getTopicRouteInfoFromNameServer("TBW102", AdminApi.TIMEOUT_MS),
            "route of TBW102");

        // an explicitly created topic works
        String created = topic("created");
        AdminApi.createTopic(api, AdminApi.masterAddr(api), created, 4, 4, 6);
        awaitRoute(created);
        assertSendOk(p.send(msg(created, "T", "ok", "stored")));
        Received rec = new Received();
        startCollecting(group(), created, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, rec);
        awaitAllKeys("message on the created topic", rec, List.of("ok"));
    }
}
