#!/usr/bin/env bash
# Installs Debian's chromium for the admin web page's browser test (test/integration/web-console.test.ts drives it
# with playwright-core, executablePath /usr/bin/chromium). Idempotent; needs root (CI runs as root). A test tool's
# own browser download (npx playwright install) is not used: only Debian's package is reachable here.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "install-chromium.sh: not root, cannot apt-get install chromium" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
