#!/usr/bin/env python3
"""The Python peer of a first night (issue 30, acceptance 2): what a plain script would do instead of
`renewal-reconciler run`, without the ledger and the reports. It selects the due subscriptions from
$DATABASE_URL as the run's due scan does (never verified; or in the expiry window and not verified since
--min-recheck; or revoked and verified before --recheck-revoked), streams them to 64 threads (a requests.Session
and an autocommit psycopg connection each) that POST each receipt to verifyReceipt (21007: again at the sandbox;
21005, 21100-21199, 5xx and transport errors: again with backoff), decide the state from the newest transaction of
the row's original transaction and its pending renewal info, and write it with one statement per row: the UPDATE of
the app's row, and (unless --plain-update) the verification time upserted into subscription_checks from that
UPDATE's RETURNING, in the same statement. On a schema before sql/018_subscription_checks.sql (the reconciler's
bookkeeping still on the app's row) the due scan reads it there and the one UPDATE writes it there too.
The shared secret is read from --shared-secret-file.
Prints `key=value` counts at the end."""
import argparse, os, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import psycopg
import requests

DUE_SQL = """
SELECT s.id, s.original_transaction_id, s.latest_receipt
  FROM subscriptions s LEFT JOIN subscription_checks c ON c.subscription_id = s.id
 WHERE (s.bundle_id IS NULL OR s.bundle_id = %(bundle)s)
   AND (c.last_verified_at IS NULL
        OR (s.state IS DISTINCT FROM 'revoked' AND s.expires_at BETWEEN %(lo)s AND %(hi)s
            AND c.last_verified_at < %(recheck)s AND (c.next_check_at IS NULL OR c.next_check_at <= %(now)s))
        OR (s.state = 'revoked' AND (c.last_verified_at < %(revoked)s OR s.version IS DISTINCT FROM c.verified_version)))
 ORDER BY s.id"""
SET = """UPDATE subscriptions SET state = %(state)s, expires_at = LEAST(COALESCE(%(expires)s, expires_at), %(cap)s),
       product_id = COALESCE(%(product)s, product_id), environment = COALESCE(%(env)s, environment), auto_renew = %(auto_renew)s,
       auto_renew_product_id = %(ar_product)s, grace_period_expires_at = %(grace)s, in_billing_retry = %(retry)s,
       revoked_at = %(revoked_at)s, latest_transaction_id = COALESCE(%(txn)s, latest_transaction_id),
       latest_receipt = COALESCE(%(receipt)s, latest_receipt)
 WHERE id = %(id)s"""
WITH_CHECKS = f"""WITH u AS ({SET} RETURNING id, version)
INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, last_apple_status, verified_version)
SELECT id, %(verified_at)s, 'ok', %(status)s, version FROM u
ON CONFLICT (subscription_id) DO UPDATE SET last_verified_at = EXCLUDED.last_verified_at, last_verify_status = 'ok',
   last_apple_status = EXCLUDED.last_apple_status, verified_version = EXCLUDED.verified_version"""
# Before migration 018: the bookkeeping is on the row; the due scan reads it there and the UPDATE writes it there.
DUE_SQL_017 = DUE_SQL.replace(" LEFT JOIN subscription_checks c ON c.subscription_id = s.id", "").replace("c.", "s.")
SET_017 = SET.replace("\n WHERE id", """, last_verified_at = %(verified_at)s, last_verify_status = 'ok',
       last_apple_status = %(status)s, verified_version = version + 1\n WHERE id""")
LATEST_MS = 4102444800000  # 2100-01-01: later (or negative) dates are not believed


class Rejected(Exception):
    pass


def when(ms):
    if ms is None:
        return None
    n = int(ms)
    if not 0 < n < LATEST_MS:
        raise Rejected(f"implausible date {ms}")
    return datetime.fromtimestamp(n / 1000, timezone.utc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verify-url", required=True)
    ap.add_argument("--sandbox-verify-url", required=True)
    ap.add_argument("--shared-secret-file", required=True)
    ap.add_argument("--bundle-id", required=True)
    ap.add_argument("--now", help="as-of instant (RFC 3339); default: the clock")
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--max-attempts", type=int, default=4)
    ap.add_argument("--plain-update", action="store_true", help="only the UPDATE, no subscription_checks upsert")
    args = ap.parse_args()
    with open(args.shared_secret_file) as f:
        secret = f.read().strip()
    dsn = os.environ["DATABASE_URL"]
    now = datetime.fromisoformat(args.now.replace("Z", "+00:00")) if args.now else datetime.now(timezone.utc)
    with psycopg.connect(dsn) as probe:
        checks_table = probe.execute("SELECT to_regclass('subscription_checks') IS NOT NULL").fetchone()[0]
    due_sql = DUE_SQL if checks_table else DUE_SQL_017
    write_sql = (SET if args.plain_update else WITH_CHECKS) if checks_table else SET_017
    local, conns, lock = threading.local(), [], threading.Lock()
    counts = dict(due=0, verified=0, updated=0, failed=0, sandbox_hops=0, retries=0, requests=0)

    def count(key, n=1):
        with lock:
            counts[key] += n

    def verify(http, receipt):
        body = {"receipt-data": receipt, "password": secret, "exclude-old-transactions": True}
        url = args.verify_url
        for attempt in range(args.max_attempts):
            if attempt:
                count("retries")
                time.sleep(min(0.05 * 2 ** attempt, 1.0))
            count("requests")
            try:
                resp = http.post(url, json=body, timeout=30)
            except requests.RequestException:
                continue
            if resp.status_code >= 500:
                continue
            if "\\u0000" in resp.text:  # PostgreSQL text holds no NUL
                raise Rejected("NUL in the answer")
            doc = resp.json()
            status = doc.get("status")
            if status == 21007 and url != args.sandbox_verify_url:
                count("sandbox_hops")
                url = args.sandbox_verify_url
                count("requests")
                doc = http.post(url, json=body, timeout=30).json()
                status = doc.get("status")
            if status == 21005 or 21100 <= (status or 0) <= 21199:
                continue
            return doc
        raise Rejected("retries exhausted")

    def decide(row, doc):
        sub_id, otid, _ = row
        status = doc.get("status")
        if status == 21010:  # the account is gone: the entitlement ended, nothing else is known
            return dict(id=sub_id, state="expired", expires=None, cap=now, product=None, env=None, auto_renew=False,
                        ar_product=None, grace=None, retry=False, revoked_at=None, txn=None, receipt=None, status=status)
        if status != 0:
            raise Rejected(f"status {status}")
        if (doc.get("receipt") or {}).get("bundle_id") != args.bundle_id:
            raise Rejected("receipt of another app")
        txns = [t for t in doc.get("latest_receipt_info") or [] if t.get("original_transaction_id") == otid]
        if not txns:
            raise Rejected("no transaction of this subscription")
        newest = max(txns, key=lambda t: int(t.get("expires_date_ms") or 0))
        expires = when(newest.get("expires_date_ms"))
        renewal = next((p for p in doc.get("pending_renewal_info") or [] if p.get("original_transaction_id") == otid), {})
        grace = when(renewal.get("grace_period_expires_date_ms"))
        revoked_at = when(newest.get("cancellation_date_ms"))
        retry = renewal.get("is_in_billing_retry_period") == "1"
        if revoked_at is not None:  # refunded: the latest expiry not refunded, else the refund's time
            kept = [when(t.get("expires_date_ms")) for t in txns if not t.get("cancellation_date_ms")]
            state, expires = "revoked", max((e for e in kept if e), default=revoked_at)
        elif expires is not None and expires > now:
            state = "active"
        elif grace is not None and grace > now:
            state = "grace_period"
        else:
            state = "billing_retry" if retry else "expired"
        return dict(id=sub_id, state=state, expires=expires, cap=None, product=newest.get("product_id"),
                    env=doc.get("environment"), auto_renew=renewal.get("auto_renew_status") == "1" if renewal else None,
                    ar_product=renewal.get("auto_renew_product_id"), grace=grace, retry=retry, revoked_at=revoked_at,
                    txn=newest.get("transaction_id"), receipt=doc.get("latest_receipt"), status=status)

    def work(row):
        if not hasattr(local, "db"):
            local.http, local.db = requests.Session(), psycopg.connect(dsn, autocommit=True)
            with lock:
                conns.append(local.db)
        try:
            params = decide(row, verify(local.http, row[2]))
            count("verified")
            params["verified_at"] = now
            local.db.execute(write_sql, params)
            count("updated")
        except Exception as e:  # a rejection, a bad answer, a value PostgreSQL refuses: this row only
            count("failed")
            print(f"subscription {row[0]}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
        finally:
            slots.release()

    slots = threading.BoundedSemaphore(args.threads * 4)  # rows read ahead of the threads: memory stays flat
    day = timedelta(days=1)
    due = dict(bundle=args.bundle_id, lo=now - 62 * day, hi=now + day, recheck=now - timedelta(hours=20),
               revoked=now - 7 * day, now=now)
    t0 = time.monotonic()
    with psycopg.connect(dsn) as scan, ThreadPoolExecutor(max_workers=args.threads) as pool:
        with scan.cursor(name="due") as cur:  # server-side: streamed, not fetched whole
            cur.itersize = 2000
            cur.execute(due_sql, due)
            for row in cur:
                counts["due"] += 1
                slots.acquire()
                pool.submit(work, row)
    for c in conns:
        c.close()
    print(" ".join(f"{k}={v}" for k, v in counts.items()) + f" seconds={time.monotonic() - t0:.2f}"
          + f" schema={'018+' if checks_table else 'pre-018'}")


if __name__ == "__main__":
    main()
