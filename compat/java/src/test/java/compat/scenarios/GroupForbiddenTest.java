package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * 5.x UPDATE_AND_GET_GROUP_FORBIDDEN (353; MQClientAPIImpl.updateAndGetGroupForbidden, what
 * MQAdminExt.updateAndGetGroupReadForbidden sends): a group denied reading a topic gets none of its messages while
 * another group gets them all, and gets them once it may read again. Called through reflection so the file compiles
 * against the 4.9.8 client, where the scenario is skipped (a 4.9.x broker does not know the code either).
 */
public class GroupForbiddenTest extends ScenarioBase {
    private static final String HEADER = "org.apache.rocketmq.remoting.protocol.header.UpdateGroupForbiddenRequestHeader";

    @BeforeEach
    void requireForbidden() {
        requireFeature("groupForbidden", "the broker does not know UPDATE_AND_GET_GROUP_FORBIDDEN (353)");
        Assumptions.assumeTrue(forbidMethod() != null, "this client has no MQClientAPIImpl.updateAndGetGroupForbidden (5.x)");
    }

    private static Method forbidMethod() {
        try {
            return MQClientAPIImpl.class.getMethod("updateAndGetGroupForbidden", String.class, Class.forName(HEADER), long.class);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** Sets (readable non-null) and reads the group's read permission on the topic; returns the broker's readable. */
    private static boolean forbid(MQClientAPIImpl api, String broker, String group, String topic, Boolean readable) throws Exception {
        Object header = Class.forName(HEADER).getConstructor().newInstance();
        header.getClass().getMethod("setGroup", String.class).invoke(header, group);
        header.getClass().getMethod("setTopic", String.class).invoke(header, topic);
        header.getClass().getMethod("setReadable", Boolean.class).invoke(header, readable);
        Object state = invoke(forbidMethod(), api, broker, header, AdminApi.TIMEOUT_MS);
        assertEquals(group, state.getClass().getMethod("getGroup").invoke(state));
        assertEquals(topic, state.getClass().getMethod("getTopic").invoke(state));
        return (Boolean) state.getClass().getMethod("getReadable").invoke(state);
    }

    @Test
    void forbiddenGroupReadsNothingUntilAllowedAgain() throws Exception {
        String topic = topic();
        DefaultMQProducer p = producer();
        assertSendOk(p.send(msg(topic, "T", "m0", "first")));
        awaitRoute(topic);
        MQClientAPIImpl api = AdminApi.api(p);
        String broker = AdminApi.masterAddr(api);
        String denied = group("denied");
        String witness = group("witness");

        assertTrue(forbid(api, broker, denied, topic, null), "a new group may read");
        assertEquals(false, forbid(api, broker, denied, topic, false), "after readable=false");
        assertEquals(false, forbid(api, broker, denied, topic, null), "read back");

        Received deniedGot = new Received();
        Received witnessGot = new Received();
        startCollecting(denied, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, deniedGot);
        startCollecting(witness, topic, "*", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, witnessGot);
        for (int i = 1; i < 4; i++) assertSendOk(p.send(msg(topic, "T", "m" + i, "more")));
        List<String> all = Arrays.asList("m0", "m1", "m2", "m3");
        // The witness group, started after the denied one, got everything; the denied one pulled meanwhile and got nothing.
        awaitAllKeys("witness group", witnessGot, all);
        sleep(QUIET_MS);
        assertEquals(0, deniedGot.all.size(), "the forbidden group received " + deniedGot.byKey.keySet());

        assertTrue(forbid(api, broker, denied, topic, true), "after readable=true");
        awaitAllKeys("the group allowed again", deniedGot, all);
    }
}
