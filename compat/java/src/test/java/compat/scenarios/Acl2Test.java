package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ACL 2.0 (tag "acl2", not in "all"): a broker with authenticationEnabled and authorizationEnabled, the users and
 * ACLs the harness created with mqadmin 5.3.3 (test/integration/acl2.test.ts, compat/acl2-official.mjs): appUser
 * may Pub/Sub Topic:Acl2TopicA, Sub Topic:Acl2TopicB, Sub Group:Acl2Group, and is denied Pub on Topic:Acl2Deny*.
 * The official 5.x broker answers a refused request with NO_PERMISSION (16) and the exception's message. Each case
 * prints "[acl2] case: allowed" or "[acl2] case: denied CODE REMARK" so two servers' runs can be compared.
 */
@Tag("acl2")
public class Acl2Test extends ScenarioBase {
    static final String USER = "appUser";
    static final String PASSWORD = "appPass123";

    static RPCHook hook(String user, String password) {
        return new AclClientRPCHook(new SessionCredentials(user, password));
    }

    DefaultMQProducer producerAs(RPCHook hook) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group("p"), hook);
        configureProducer(p);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        onClose(p::shutdown);
        return p;
    }

    @SuppressWarnings("deprecation")
    DefaultMQPullConsumer pullConsumer(String group, RPCHook hook) throws Exception {
        DefaultMQPullConsumer c = new DefaultMQPullConsumer(group, hook);
        c.setNamesrvAddr(NAMESRV);
        c.setInstanceName(instanceName());
        c.setVipChannelEnabled(false);
        c.start();
        onClose(c::shutdown);
        return c;
    }

    /** The broker's code and remark from the cause chain of what {@code r} throws. */
    static void assertDenied(String what, org.junit.jupiter.api.function.Executable r, String remark) {
        Throwable t = assertThrows(Exception.class, r, what + " should be denied");
        for (Throwable c = t; c != null; c = c.getCause()) {
            int code = -1;
            String msg = null;
            if (c instanceof MQBrokerException) {
                code = ((MQBrokerException) c).getResponseCode();
                msg = ((MQBrokerException) c).getErrorMessage();
            } else if (c instanceof MQClientException && ((MQClientException) c).getResponseCode() > 0 && c.getCause() == null) {
                code = ((MQClientException) c).getResponseCode();
                msg = ((MQClientException) c).getErrorMessage();
            }
            if (code >= 0) {
                System.out.println("[acl2] " + what + ": denied " + code + " " + msg);
                assertEquals(16, code, what + ": response code");
                assertEquals(remark, msg, what + ": remark");
                return;
            }
        }
        throw new AssertionError(what + ": no broker answer in " + t, t);
    }

    static String noPermission(String resource, String detail) {
        return "User:" + USER + " has no permission to access " + resource + " from 127.0.0.1, " + detail;
    }

    @Test
    void sendsAreAuthenticatedAndAuthorized() throws Exception {
        DefaultMQProducer app = producerAs(hook(USER, PASSWORD));
        awaitRoute("Acl2TopicA");
        assertSendOk(app.send(msg("Acl2TopicA", "T", "acl2-ok", "allowed: Pub on Topic:Acl2TopicA")));
        System.out.println("[acl2] appUser sends to Acl2TopicA: allowed");

        assertDenied("appUser sends to Acl2TopicB", () -> app.send(msg("Acl2TopicB", "T", "k", "Sub only")),
            noPermission("Topic:Acl2TopicB", "no matched policies."));
        assertDenied("appUser sends to Acl2DenyTopic", () -> app.send(msg("Acl2DenyTopic", "T", "k", "denied")),
            noPermission("Topic:Acl2DenyTopic", "the decision is deny."));

        DefaultMQProducer wrong = producerAs(hook(USER, "not-the-password"));
        assertDenied("wrong password", () -> wrong.send(msg("Acl2TopicA", "T", "k", "x")), "check signature failed.");
        DefaultMQProducer nobody = producerAs(hook("nobody", "whatever123"));
        assertDenied("unknown user", () -> nobody.send(msg("Acl2TopicA", "T", "k", "x")), "User:nobody is not found.");
        DefaultMQProducer unsigned = producerAs(null);
        assertDenied("unsigned", () -> unsigned.send(msg("Acl2TopicA", "T", "k", "x")), "username cannot be null.");
    }

    @Test
    @SuppressWarnings("deprecation")
    void pullsNeedTopicAndGroup() throws Exception {
        DefaultMQProducer app = producerAs(hook(USER, PASSWORD));
        String brokerName = awaitRoute("Acl2TopicA").get(0).getBrokerName();
        MessageQueue q0 = new MessageQueue("Acl2TopicA", brokerName, 0);
        assertSendOk(app.send(msg("Acl2TopicA", "T", "acl2-pull", "for the pull cases"), q0));

        DefaultMQPullConsumer ok = pullConsumer("Acl2Group", hook(USER, PASSWORD));
        PullResult r = ok.pull(q0, "*", 0, 32);
        assertTrue(r.getMsgFoundList() != null && !r.getMsgFoundList().isEmpty(), "messages pulled: " + r);
        System.out.println("[acl2] group Acl2Group pulls Acl2TopicA: allowed");

        DefaultMQPullConsumer other = pullConsumer("Acl2OtherGroup", hook(USER, PASSWORD));
        assertDenied("group Acl2OtherGroup pulls Acl2TopicA", () -> other.pull(q0, "*", 0, 32),
            noPermission("Group:Acl2OtherGroup", "no matched policies."));
    }
}
