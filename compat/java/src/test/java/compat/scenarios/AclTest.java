package compat.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ACL 1.0 (tag "acl", not in "all"): a broker with aclEnable=true and compat/acl/plain_acl.yml. The stock client's
 * AclClientRPCHook signs every request; the official 4.9.x broker answers a denied request with SYSTEM_ERROR (1) and
 * the AclException text plus its first stack frame as the remark (NettyRemotingAbstract + exceptionSimpleDesc).
 * Each case prints "[acl] case: allowed" or "[acl] case: denied CODE REMARK", so two servers' runs can be compared.
 */
@Tag("acl")
public class AclTest extends ScenarioBase {
    static final String USER = "RocketMQUser";
    static final String USER_SECRET = "12345678secret";
    static final String ADMIN = "RocketMQAdmin";
    static final String ADMIN_SECRET = "12345678admin";
    static final String TOPIC_A = "AclTopicA";
    static final String TOPIC_B = "AclTopicB";
    static final String TOPIC_DENY = "AclTopicDeny";
    static final String FRAME = ", org.apache.rocketmq.acl.plain.PlainPermissionManager.";

    static RPCHook hook(String ak, String sk) {
        return new AclClientRPCHook(new SessionCredentials(ak, sk));
    }

    DefaultMQProducer signedProducer(RPCHook hook) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group("p"), hook);
        configureProducer(p);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        onClose(p::shutdown);
        return p;
    }

    /** What a broker answered, from the exception a client call throws. */
    static final class Denial {
        final int code;
        final String remark;

        Denial(int code, String remark) {
            this.code = code;
            this.remark = remark;
        }
    }

    /**
     * The broker's code and remark in the cause chain of what {@code r} throws: an MQBrokerException (sends, pulls)
     * or an MQClientException carrying a response code (admin calls).
     */
    static Denial brokerError(String what, org.junit.jupiter.api.function.Executable r) {
        Throwable t = assertThrows(Exception.class, r, what + " should be denied");
        for (Throwable c = t; c != null; c = c.getCause()) {
            Denial d = null;
            if (c instanceof MQBrokerException) {
                d = new Denial(((MQBrokerException) c).getResponseCode(), ((MQBrokerException) c).getErrorMessage());
            } else if (c instanceof MQClientException && ((MQClientException) c).getResponseCode() > 0
                && c.getCause() == null) {
                d = new Denial(((MQClientException) c).getResponseCode(), ((MQClientException) c).getErrorMessage());
            }
            if (d != null) {
                System.out.println("[acl] " + what + ": denied " + d.code + " " + d.remark);
                return d;
            }
        }
        throw new AssertionError(what + ": no broker answer in " + t, t);
    }

    static void assertDenied(Denial d, String message, String frame) {
        assertEquals(1, d.code, "response code");
        assertEquals("org.apache.rocketmq.acl.common.AclException: " + message + FRAME + frame, d.remark);
    }

    void ensureTopics() throws Exception {
        DefaultMQProducer admin = signedProducer(hook(ADMIN, ADMIN_SECRET));
        MQClientAPIImpl api = AdminApi.api(admin);
        String broker = AdminApi.masterAddr(api);
        for (String t : List.of(TOPIC_A, TOPIC_B, TOPIC_DENY)) {
            AdminApi.createTopic(api, broker, t, 4, 4, 6);
        }
        System.out.println("[acl] admin creates topics: allowed");
        for (String t : List.of(TOPIC_A, TOPIC_B, TOPIC_DENY)) {
            awaitRoute(t);
        }
    }

    @Test
    void signedRequestsArePermittedOrDeniedPerAccount() throws Exception {
        ensureTopics();

        DefaultMQProducer user = signedProducer(hook(USER, USER_SECRET));
        assertSendOk(user.send(msg(TOPIC_A, "T", "acl-ok", "allowed by topicPerms PUB|SUB")));
        System.out.println("[acl] user sends to " + TOPIC_A + ": allowed");

        assertDenied(brokerError("user sends to " + TOPIC_B, () -> user.send(msg(TOPIC_B, "T", "k", "SUB only"))),
            "No default permission for topic:" + TOPIC_B, "checkPerm(PlainPermissionManager.java:611)");
        assertDenied(brokerError("user sends to " + TOPIC_DENY, () -> user.send(msg(TOPIC_DENY, "T", "k", "default DENY"))),
            "No default permission for topic:" + TOPIC_DENY, "checkPerm(PlainPermissionManager.java:606)");

        MQClientAPIImpl userApi = AdminApi.api(user);
        String broker = AdminApi.masterAddr(userApi);
        assertDenied(brokerError("user creates a topic", () -> AdminApi.createTopic(userApi, broker, topic("x"), 1, 1, 6)),
            "Need admin permission for request code=17, but accessKey=" + USER + " is not",
            "checkPerm(PlainPermissionManager.java:581)");

        DefaultMQProducer wrong = signedProducer(hook(USER, "wrong-secret-123"));
        assertDenied(brokerError("wrong secret", () -> wrong.send(msg(TOPIC_A, "T", "k", "bad signature"))),
            "Check signature failed for accessKey=" + USER, "validate(PlainPermissionManager.java:684)");

        DefaultMQProducer unknown = signedProducer(hook("NoSuchKey1", "12345678secret"));
        assertDenied(brokerError("unknown key", () -> unknown.send(msg(TOPIC_A, "T", "k", "unknown key"))),
            "No acl config for NoSuchKey1", "validate(PlainPermissionManager.java:668)");

        DefaultMQProducer unsigned = signedProducer(null);
        assertDenied(brokerError("unsigned", () -> unsigned.send(msg(TOPIC_A, "T", "k", "unsigned"))),
            "No accessKey is configured", "validate(PlainPermissionManager.java:664)");
    }

    @Test
    @SuppressWarnings("deprecation")
    void pullsNeedTopicAndGroupPermissions() throws Exception {
        ensureTopics();
        DefaultMQProducer user = signedProducer(hook(USER, USER_SECRET));
        String brokerName = awaitRoute(TOPIC_A).get(0).getBrokerName();
        MessageQueue q0 = new MessageQueue(TOPIC_A, brokerName, 0);
        assertSendOk(user.send(msg(TOPIC_A, "T", "acl-pull", "for the pull cases"), q0));

        DefaultMQPullConsumer ok = pullConsumer("AclGroupOk", hook(USER, USER_SECRET));
        PullResult r = ok.pull(q0, "*", 0, 32);
        assertTrue(r.getMsgFoundList() != null && !r.getMsgFoundList().isEmpty(), "messages pulled: " + r);
        System.out.println("[acl] group AclGroupOk pulls " + TOPIC_A + ": allowed");

        DefaultMQPullConsumer denied = pullConsumer("AclGroupDenied", hook(USER, USER_SECRET));
        assertDenied(brokerError("group AclGroupDenied pulls",
                () -> denied.pull(q0, "*", 0, 32)),
            "No default permission for group:AclGroupDenied", "checkPerm(PlainPermissionManager.java:611)");

        assertDenied(brokerError("group AclGroupOk pulls " + TOPIC_DENY,
                () -> ok.pull(new MessageQueue(TOPIC_DENY, brokerName, 0), "*", 0, 32)),
            "No default permission for topic:" + TOPIC_DENY, "checkPerm(PlainPermissionManager.java:606)");
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
}
