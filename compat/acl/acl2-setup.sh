#!/usr/bin/env bash
# ACL 2.0 setup for compat/java Acl2Test, through the stock mqadmin 5.3.3 signed as the initial super user
# (initAuthenticationUser {"username":"rocketmq","password":"12345678"}):
#   compat/acl/acl2-setup.sh NAMESRV BROKER_ADDR
# Topics Acl2TopicA, Acl2TopicB, Acl2DenyTopic; user appUser/appPass123 with: Topic:Acl2TopicA Pub,Sub Allow;
# Topic:Acl2TopicB Sub Allow; Group:Acl2Group Sub Allow; Topic:Acl2Deny* Pub Deny.
set -euo pipefail
NS="$1"; BROKER="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export MQADMIN_VERSION=5.3.3 MQADMIN_ACCESS_KEY=rocketmq MQADMIN_SECRET_KEY=12345678
mq() { echo "+ mqadmin $*"; bash "$HERE/../mqadmin/run.sh" "$@" -n "$NS"; }
for t in Acl2TopicA Acl2TopicB Acl2DenyTopic; do mq updateTopic -b "$BROKER" -t "$t" -r 4 -w 4; done
mq createUser -b "$BROKER" -u appUser -p appPass123
mq createAcl -b "$BROKER" -s User:appUser -r Topic:Acl2TopicA -a Pub,Sub -d Allow
mq createAcl -b "$BROKER" -s User:appUser -r Topic:Acl2TopicB -a Sub -d Allow
mq createAcl -b "$BROKER" -s User:appUser -r Group:Acl2Group -a Sub -d Allow
mq createAcl -b "$BROKER" -s User:appUser -r 'Topic:Acl2Deny*' -a Pub -d Deny
mq getUser -b "$BROKER" -u appUser
mq getAcl -b "$BROKER" -s User:appUser
