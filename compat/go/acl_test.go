package compat

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// TestAclCredentials runs only against a broker with aclEnable=true and compat/acl/plain_acl.yml (ACL_ENABLED=1):
// the Go client's credentials sign every request as the Java AclClientRPCHook does. RocketMQUser may publish and
// subscribe AclTopicA, only subscribe AclTopicB; a wrong secret fails the signature check.
func TestAclCredentials(t *testing.T) {
	if os.Getenv("ACL_ENABLED") != "1" {
		t.Skip("ACL_ENABLED is not 1: needs a broker with aclEnable=true and compat/acl/plain_acl.yml")
	}
	user := primitive.Credentials{AccessKey: "RocketMQUser", SecretKey: "12345678secret"}
	wrong := primitive.Credentials{AccessKey: "RocketMQUser", SecretKey: "not-the-secret"}
	_, group := names("Acl")

	p := newProducer(t, group+"_P", producer.WithCredentials(user), producer.WithRetry(0))
	key := "go-acl-" + runID()
	res, err := p.SendSync(sendCtx(t), primitive.NewMessage("AclTopicA", []byte(key)).WithKeys([]string{key}))
	if !checkSendResult(t, 0, "AclTopicA", res, err) {
		t.FailNow()
	}
	t.Logf("[acl] go user sends to AclTopicA: allowed")

	_, err = p.SendSync(sendCtx(t), primitive.NewMessage("AclTopicB", []byte("SUB only")))
	if err == nil || !strings.Contains(err.Error(), "No default permission for topic:AclTopicB") {
		t.Fatalf("send to AclTopicB: want the broker's permission denial, got %v", err)
	}
	t.Logf("[acl] go user sends to AclTopicB: denied: %v", err)

	bad := newProducer(t, group+"_W", producer.WithCredentials(wrong), producer.WithRetry(0))
	_, err = bad.SendSync(sendCtx(t), primitive.NewMessage("AclTopicA", []byte("bad signature")))
	if err == nil || !strings.Contains(err.Error(), "Check signature failed for accessKey=RocketMQUser") {
		t.Fatalf("send with a wrong secret: want the broker's signature denial, got %v", err)
	}
	t.Logf("[acl] go wrong secret: denied: %v", err)

	col := newCollector()
	startPushConsumer(t, "AclTopicA", "AclGroupOk", col, pushOpts{
		model: consumer.Clustering,
		extra: []consumer.Option{consumer.WithCredentials(user)},
	})
	deadline := time.Now().Add(consumeTimeout)
	for time.Now().Before(deadline) {
		if _, ok := col.snapshot()[key]; ok {
			t.Logf("[acl] go group AclGroupOk consumes AclTopicA: allowed")
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("message with body %s not consumed by AclGroupOk within %s", key, consumeTimeout)
}
