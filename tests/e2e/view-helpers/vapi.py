# Imported by the Python parts of tests/e2e/view-helpers/compare.sh: a request to a running
# `callpath view` (base URL, token) and its JSON answer.
import json
import time
import urllib.request


def get(base, token, path, strict=False):
    """GET path; a 202 (the whole profile loading) is asked again every 0.1 s (60 s at
    most), unless strict: then it fails (the answer must come without that load)."""
    for _ in range(600):
        req = urllib.request.Request(base + path, headers={"X-Callpath-Token": token})
        r = urllib.request.urlopen(req)
        if r.status != 202:
            return json.load(r)
        if strict:
            raise SystemExit("202 (loading the whole profile): " + path)
        time.sleep(0.1)
    raise SystemExit("still loading after 60 s: " + path)
