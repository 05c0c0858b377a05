# Regenerates the scenario fixtures in this folder: python3 generate_fixtures.py
# The JSON files are the source of truth for the tests; this script only documents how they were made
# (shared helpers for Apple-shaped transactions) and makes adding a scenario cheap.
import json, os, datetime
OUT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(OUT, exist_ok=True)
NOW = 1717200000000  # 2024-06-01T00:00:00Z
DAY = 86400000
BUNDLE = 'com.example.reader'

def iso(ms):
    if ms is None: return None
    d = datetime.datetime.fromtimestamp(ms/1000, datetime.timezone.utc)
    s = d.strftime('%Y-%m-%dT%H:%M:%S')
    if ms % 1000: s += '.%03d' % (ms % 1000)
    return s + 'Z'

def gmt(ms):
    d = datetime.datetime.fromtimestamp(ms/1000, datetime.timezone.utc)
    return d.strftime('%Y-%m-%d %H:%M:%S Etc/GMT')

def pst(ms):
    d = datetime.datetime.fromtimestamp(ms/1000 - 7*3600, datetime.timezone.utc)
    return d.strftime('%Y-%m-%d %H:%M:%S America/Los_Angeles')

def txn(tid, otid, product, purchase, expires, group='20500001', woli=None, **extra):
    t = {
        'quantity': '1', 'product_id': product, 'transaction_id': tid, 'original_transaction_id': otid,
        'purchase_date': gmt(purchase), 'purchase_date_ms': str(purchase), 'purchase_date_pst': pst(purchase),
        'original_purchase_date': gmt(purchase), 'original_purchase_date_ms': str(purchase),
        'original_purchase_date_pst': pst(purchase),
        'expires_date': gmt(expires), 'expires_date_ms': str(expires), 'expires_date_pst': pst(expires),
        'web_order_line_item_id': woli or ('23' + tid[-10:]), 'is_trial_period': 'false',
        'is_in_intro_offer_period': 'false', 'in_app_ownership_type': 'PURCHASED',
        'subscription_group_identifier': group,
    }
    for k, v in extra.items():
        if k == 'cancel':
            t['cancellation_date'] = gmt(v); t['cancellation_date_ms'] = str(v); t['cancellation_date_pst'] = pst(v)
        elif v is None:
            t.pop(k, None)
        else:
            t[k] = v
    return t

def pending(otid, product, auto_renew='1', auto_product=None, **extra):
    p = {'auto_renew_product_id': auto_product or product, 'product_id': product,
         'original_transaction_id': otid, 'auto_renew_status': auto_renew}
    p.update(extra)
    return p

def resp(status=0, env='Production', lri=None, in_app=None, pend=None, bundle=BUNDLE, extra=None, latest_receipt=True):
    r = {'status': status, 'environment': env}
    receipt = {'receipt_type': 'Production' if env == 'Production' else 'ProductionSandbox',
               'adam_id': 1234567890, 'app_item_id': 1234567890, 'bundle_id': bundle,
               'application_version': '42', 'download_id': 0, 'version_external_identifier': 0,
               'receipt_creation_date_ms': str(NOW - DAY), 'request_date_ms': str(NOW),
               'original_purchase_date_ms': '1600000000000', 'original_application_version': '1.0',
               'in_app': in_app if in_app is not None else (lri[-1:] if lri else [])}
    if bundle is None: receipt.pop('bundle_id')
    r['receipt'] = receipt
    if lri is not None: r['latest_receipt_info'] = lri
    if latest_receipt: r['latest_receipt'] = 'MIIUVQYJKoZIhvcNAQcCoIIURjCCFEICAQExCzAJBgUrDgMCGgUAMIIDk' + 'A' * 64
    if pend is not None: r['pending_renewal_info'] = pend
    if extra: r.update(extra)
    return r

scenarios = []
def add(name, description, body, expect, stored=None, now=NOW, env='Production', http=200, headers=None,
        transport=None, bundle=BUNDLE, raw=None, ext='json', extra_ctx=None):
    side = {'description': description, 'now': iso(now), 'requested_environment': env, 'bundle_id': bundle,
            'http_status': http}
    if headers: side['headers'] = headers
    if transport: side['transport'] = transport
    if stored: side['stored'] = stored
    if extra_ctx: side.update(extra_ctx)
    if body is not None or raw is not None:
        side['body'] = name + '.' + ext
        with open(os.path.join(OUT, side['body']), 'w') as f:
            if raw is not None: f.write(raw)
            else: f.write(json.dumps(body, indent=2) + '\n')
    side['expect'] = expect
    with open(os.path.join(OUT, name + '.expect.json'), 'w') as f:
        f.write(json.dumps(side, indent=2) + '\n')
    scenarios.append(name)

OT = '1000000811111111'
def st(state='active', expires=NOW - 5*DAY, product='com.example.reader.monthly', **kw):
    s = {'original_transaction_id': OT, 'product_id': product, 'state': state, 'expires_at': iso(expires)}
    for k, v in kw.items(): s[k] = v
    return s

M = 'com.example.reader.monthly'; Y = 'com.example.reader.yearly'; P = 'com.example.reader.premium.monthly'
# Monthly history: initial 90d ago, renewals every 30d.
def monthly_history(otid=OT, product=M, n=4, last_expires=NOW + 25*DAY, base='1000000811111'):
    out = []
    for i in range(n):
        exp = last_expires - (n - 1 - i) * 30 * DAY
        pur = exp - 30 * DAY
        tid = otid if i == 0 else base + '%03d' % (200 + i)
        out.append(txn(tid, otid, product, pur, exp))
    return out

hist = monthly_history()
# ---------- status table ----------
add('status_0_active_renewed', 'Status 0, newest monthly period expires in 25 days: active, renewed over the stored expiry.',
    resp(lri=hist, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'outcome': 'renewed', 'state': 'active', 'expires_at': iso(NOW + 25*DAY),
      'product_id': M, 'latest_transaction_id': hist[-1]['transaction_id'], 'auto_renew': True,
      'auto_renew_product_id': M, 'ledger_kinds': ['initial', 'renewal', 'renewal', 'renewal'],
      'expiry_moved_backwards': False, 'environment': 'Production', 'has_latest_receipt': True}},
    stored=st(expires=NOW - 5*DAY))
old = monthly_history(last_expires=NOW - 40*DAY, n=2)
add('status_21006_expired_treated_as_ok', 'Status 21006 (iOS 6 style, subscription expired) still carries the receipt: decided like 0, expired.',
    resp(status=21006, lri=old, pend=[pending(OT, M, auto_renew='0', expiration_intent='1')]),
    {'verdict': 'ok', 'decision': {'outcome': 'lapsed', 'state': 'expired', 'expires_at': iso(NOW - 40*DAY),
      'expiration_intent': 1, 'auto_renew': False}},
    stored=st(expires=NOW - 40*DAY, state='active'))
add('status_21000_bad_request', 'Status 21000: our request shape is wrong: configuration error, fail loudly.',
    {'status': 21000}, {'verdict': 'config_error', 'reason_code': 'bad_request'})
add('status_21002_malformed_or_temporary', 'Status 21002: retry; after the budget the caller records invalid_receipt.',
    {'status': 21002, 'environment': 'Production'},
    {'verdict': 'retry', 'reason_code': 'receipt_malformed_or_temporary', 'earliest': None})
add('status_21003_not_authenticated', 'Status 21003: permanent reject.', {'status': 21003},
    {'verdict': 'reject', 'reason_code': 'receipt_not_authenticated'})
add('status_21004_shared_secret_mismatch', 'Status 21004: this receipt is refused (another app\'s receipt with our secret, '
    'for example); the run stops only when 21004s are systematic, which one answer cannot tell.',
    {'status': 21004}, {'verdict': 'reject', 'reason_code': 'shared_secret_mismatch'})
add('status_21005_server_unavailable', 'Status 21005: retry.', {'status': 21005},
    {'verdict': 'retry', 'reason_code': 'server_unavailable'})
add('status_21007_sandbox_receipt_in_production', 'Status 21007 from production: resend to sandbox.',
    {'status': 21007}, {'verdict': 'switch_environment', 'switch_to': 'Sandbox'})
add('status_21008_production_receipt_in_sandbox', 'Status 21008 from sandbox: resend to production.',
    {'status': 21008}, {'verdict': 'switch_environment', 'switch_to': 'Production'}, env='Sandbox')
add('status_21007_from_sandbox_is_a_loop', 'Status 21007 answered by the sandbox itself: reject instead of ping-pong.',
    {'status': 21007, 'environment': 'Sandbox'}, {'verdict': 'reject', 'reason_code': 'environment_loop'}, env='Sandbox')
add('status_21008_from_production_is_a_loop', 'Status 21008 answered by production itself: reject instead of ping-pong.',
    {'status': 21008}, {'verdict': 'reject', 'reason_code': 'environment_loop'})
add('status_21009_internal_data_access', 'Status 21009: retry.', {'status': 21009},
    {'verdict': 'retry', 'reason_code': 'internal_data_access'})
add('status_21010_account_not_found', 'Status 21010: "treat as if a purchase was never made": the entitlement of an active '
    'row ends now (expired, expiry moved back to now, auto-renew off), the reason recorded.', {'status': 21010},
    {'verdict': 'reject', 'reason_code': 'account_not_found', 'decision': {'outcome': 'lapsed', 'state': 'expired',
      'expires_at': iso(NOW), 'expiry_moved_backwards': True, 'auto_renew': False, 'has_notes': True,
      'has_latest_receipt': False}},
    stored=st(expires=NOW + 20*DAY, state='active', auto_renew=True))
add('status_21100_is_retryable_json_true', '21100 with is_retryable true (JSON boolean): retry.',
    {'status': 21100, 'is_retryable': True}, {'verdict': 'retry', 'reason_code': 'internal_data_access'})
add('status_21101_is_retryable_string_true', '21101 with is_retryable "true": retry.',
    {'status': 21101, 'is_retryable': 'true'}, {'verdict': 'retry', 'reason_code': 'internal_data_access'})
add('status_21150_is_retryable_number_1', '21150 with is_retryable 1 (number): retry.',
    {'status': 21150, 'is_retryable': 1}, {'verdict': 'retry', 'reason_code': 'internal_data_access'})
add('status_21199_dash_spelling_string_1', '21199 with the dash spelling is-retryable "1": retry.',
    {'status': 21199, 'is-retryable': '1'}, {'verdict': 'retry', 'reason_code': 'internal_data_access'})
add('status_21100_without_retry_flag', '21100 without any retry flag: absent means retry.',
    {'status': 21100}, {'verdict': 'retry', 'reason_code': 'internal_data_access'})
add('status_21120_is_retryable_false', '21120 with is_retryable false: stop asking, unresolved (an Apple error, no verdict on the receipt).',
    {'status': 21120, 'is_retryable': False}, {'verdict': 'unresolved', 'reason_code': 'internal_data_access_permanent'})
add('status_21130_dash_spelling_string_false', '21130 with is-retryable "0": stop asking, unresolved (an Apple error, no verdict on the receipt).',
    {'status': 21130, 'is-retryable': '0'}, {'verdict': 'unresolved', 'reason_code': 'internal_data_access_permanent'})
add('status_21001_unknown_rejected', 'A status outside the table (21001) is rejected as "unknown status 21001", never retried forever.',
    {'status': 21001}, {'verdict': 'reject', 'reason_code': 'unknown_status', 'reason_contains': 'unknown status 21001'})
add('status_as_string_21005', 'Status sent as a string "21005" is read as 21005.',
    {'status': '21005'}, {'verdict': 'retry', 'reason_code': 'server_unavailable'})
# ---------- HTTP and transport ----------
add('http_503_retry_after_seconds', 'HTTP 503 with Retry-After: 120 (delta-seconds): retry not before now+120s.',
    None, {'verdict': 'retry', 'reason_code': 'http_server_error', 'earliest': iso(NOW + 120000)},
    http=503, headers={'Retry-After': '120'}, raw='<html><body>Service Unavailable</body></html>', ext='html')
add('http_429_retry_after_http_date', 'HTTP 429 with an HTTP-date Retry-After: retry not before that date.',
    None, {'verdict': 'retry', 'reason_code': 'http_rate_limited', 'earliest': iso(NOW + 300000)},
    http=429, headers={'Retry-After': 'Sat, 01 Jun 2024 00:05:00 GMT'}, raw='', ext='txt')
add('http_500_without_retry_after', 'HTTP 500 without Retry-After: retry, no earliest time.',
    None, {'verdict': 'retry', 'reason_code': 'http_server_error', 'earliest': None}, http=500, raw='oops', ext='txt')
add('http_408_request_timeout', 'HTTP 408: retry.', None, {'verdict': 'retry', 'reason_code': 'http_request_timeout'},
    http=408, raw='', ext='txt')
add('http_404_wrong_endpoint', 'HTTP 404: the endpoint URL is wrong for every row: configuration error.',
    None, {'verdict': 'config_error', 'reason_code': 'http_client_error'}, http=404, raw='Not Found', ext='txt')
add('http_413_receipt_too_large', 'HTTP 413: this receipt is too large for the endpoint: reject this row only.',
    None, {'verdict': 'reject', 'reason_code': 'http_payload_too_large'}, http=413, raw='', ext='txt')
add('transport_timeout', 'No response (timeout): retry.', None,
    {'verdict': 'retry', 'reason_code': 'transport'}, transport='timeout')
add('transport_connection_reset', 'Connection reset mid-response: retry.', None,
    {'verdict': 'retry', 'reason_code': 'transport'}, transport='connectionReset')
add('transport_response_too_large', 'Body over the client cap: reject (it will not shrink on retry).', None,
    {'verdict': 'reject', 'reason_code': 'response_too_large'}, transport='responseTooLarge')
add('not_json_html_maintenance_page', 'HTTP 200 with an HTML maintenance page: not JSON at byte 0: retry.',
    None, {'verdict': 'retry', 'reason_code': 'malformed_response', 'parse_error': 'not_json', 'parse_error_byte': 0},
    raw='<!DOCTYPE html><html><head><title>Maintenance</title></head></html>\n', ext='html')
full = json.dumps(resp(lri=hist, pend=[pending(OT, M)]), indent=2)
add('truncated_body', 'HTTP 200 with a body cut off mid-transfer: not JSON (truncated): retry.',
    None, {'verdict': 'retry', 'reason_code': 'malformed_response', 'parse_error': 'not_json',
           'parse_error_byte': len(full[:1500].encode())}, raw=full[:1500], ext='json')
add('json_without_status', 'JSON, but no status field: not a verifyReceipt response: retry.',
    {'error': 'upstream proxy failure', 'code': 502},
    {'verdict': 'retry', 'reason_code': 'malformed_response', 'parse_error': 'missing_status'})
add('json_top_level_array', 'A JSON array is not a verifyReceipt response.', [{'status': 0}],
    {'verdict': 'retry', 'reason_code': 'malformed_response', 'parse_error': 'not_an_object'})
bad = resp(lri=hist); bad['latest_receipt_info'] = 'not-an-array'
add('wrong_type_latest_receipt_info', 'latest_receipt_info is a string: an error naming the field.',
    bad, {'verdict': 'retry', 'reason_code': 'malformed_response', 'parse_error': 'invalid_field',
          'parse_error_field': 'latest_receipt_info'})
bad2 = resp(lri=[dict(t) for t in hist], pend=[pending(OT, M)]); bad2['latest_receipt_info'][2]['expires_date_ms'] = 'soon'
add('wrong_value_expires_date_ms', 'An expires_date_ms that is not a number: an error naming the exact field.',
    bad2, {'verdict': 'retry', 'reason_code': 'malformed_response', 'parse_error': 'invalid_field',
           'parse_error_field': 'latest_receipt_info[2].expires_date_ms'})

# ---------- engine ----------
# Upgrade: monthly basic upgraded to premium 10 days ago.
up_at = NOW - 10*DAY
up = [txn(OT, OT, M, NOW - 50*DAY, NOW - 20*DAY),
      txn('1000000811111201', OT, M, NOW - 20*DAY, NOW + 10*DAY, is_upgraded='true', cancel=up_at),
      txn('1000000811111202', OT, P, up_at, up_at + 30*DAY)]
add('upgrade_not_refund', 'An is_upgraded transaction carries a cancellation date but is not a refund: the premium upgrade is active.',
    resp(lri=[up[1], up[2], up[0]], pend=[pending(OT, P)]),
    {'verdict': 'ok', 'decision': {'outcome': 'renewed', 'state': 'active', 'expires_at': iso(up_at + 30*DAY), 'product_id': P,
      'latest_transaction_id': '1000000811111202', 'revoked_at': None, 'ledger_kinds': ['initial', 'renewal', 'upgrade'],
      'expiry_moved_backwards': False}},
    stored=st(expires=NOW + 10*DAY, product=M, latest_transaction_id='1000000811111201'))
# Refund of current period.
rf = [txn(OT, OT, M, NOW - 50*DAY, NOW - 20*DAY), txn('1000000811111301', OT, M, NOW - 20*DAY, NOW + 10*DAY,
      cancel=NOW - 2*DAY, cancellation_reason='1')]
add('refund_of_current_period_revokes', 'The current period was refunded: revoked; expiry falls back to the last unrefunded period, explicitly.',
    resp(lri=rf, pend=[pending(OT, M, auto_renew='0')]),
    {'verdict': 'ok', 'decision': {'outcome': 'revoked', 'state': 'revoked', 'expires_at': iso(NOW - 20*DAY),
      'product_id': M, 'revoked_at': iso(NOW - 2*DAY), 'cancellation_reason': 1, 'expiry_moved_backwards': True,
      'latest_transaction_id': OT, 'ledger_kinds': ['initial', 'refund']}},
    stored=st(expires=NOW + 10*DAY, latest_transaction_id='1000000811111301'))
rof = [txn(OT, OT, M, NOW - 50*DAY, NOW - 20*DAY, cancel=NOW - 30*DAY, cancellation_reason='0'),
       txn('1000000811111401', OT, M, NOW - 20*DAY, NOW + 10*DAY)]
add('refund_of_older_period_does_not_revoke', 'An old period was refunded; the current one was not: still active.',
    resp(lri=rof, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'outcome': 'unchanged', 'state': 'active', 'expires_at': iso(NOW + 10*DAY),
      'revoked_at': None, 'cancellation_reason': None, 'ledger_kinds': ['refund', 'renewal'], 'expiry_moved_backwards': False}},
    stored=st(expires=NOW + 10*DAY, latest_transaction_id='1000000811111401', auto_renew=True,
              auto_renew_product_id=M, environment='Production', in_billing_retry=False))
allr = [txn(OT, OT, Y, NOW - 100*DAY, NOW + 265*DAY, cancel=NOW - 3*DAY, cancellation_reason='0')]
add('all_transactions_refunded', 'The only (yearly) transaction was refunded: revoked, expiry = the refund time.',
    resp(lri=allr, pend=[pending(OT, Y, auto_renew='0')]),
    {'verdict': 'ok', 'decision': {'outcome': 'revoked', 'state': 'revoked', 'expires_at': iso(NOW - 3*DAY),
      'product_id': Y, 'revoked_at': iso(NOW - 3*DAY), 'cancellation_reason': 0, 'expiry_moved_backwards': True,
      'ledger_kinds': ['refund']}},
    stored=st(expires=NOW + 265*DAY, product=Y))
add('unsorted_arrays', 'latest_receipt_info in no particular order: the latest expiry wins, not the last element.',
    resp(lri=[hist[1], hist[3], hist[0], hist[2]], pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 25*DAY),
      'latest_transaction_id': hist[3]['transaction_id'], 'ledger_kinds': ['initial', 'renewal', 'renewal', 'renewal']}},
    stored=st(expires=NOW - 5*DAY))
OT2 = '2000000922222222'; V = 'com.example.reader.video.monthly'
g2 = monthly_history(otid=OT2, product=V, n=2, last_expires=NOW - 3*DAY, base='2000000922222')
for t in g2: t['subscription_group_identifier'] = '20500002'
add('several_subscription_groups', 'Two subscription groups in one receipt: only the row\'s original_transaction_id counts.',
    resp(lri=hist + g2, pend=[pending(OT, M), pending(OT2, V, auto_renew='0', expiration_intent='1')]),
    {'verdict': 'ok', 'decision': {'state': 'expired', 'expires_at': iso(NOW - 3*DAY), 'product_id': V, 'auto_renew': False,
      'expiration_intent': 1, 'ledger_kinds': ['initial', 'renewal']}},
    stored={'original_transaction_id': OT2, 'product_id': V, 'state': 'active', 'expires_at': iso(NOW - 3*DAY)},
    extra_ctx={'explain_candidates': [OT, OT2]})
add('pending_renewal_info_other_order', 'pending_renewal_info listed in a different order than the subscriptions: matched by id, not index.',
    resp(lri=g2 + hist, pend=[pending(OT, M, auto_renew='1'),
                              pending(OT2, V, auto_renew='0', auto_product='com.example.reader.video.yearly', expiration_intent='1')]),
    {'verdict': 'ok', 'decision': {'product_id': V, 'auto_renew': False, 'auto_renew_product_id': 'com.example.reader.video.yearly',
      'expiration_intent': 1, 'state': 'expired'}},
    stored={'original_transaction_id': OT2, 'product_id': V, 'state': 'expired', 'expires_at': iso(NOW - 3*DAY)})
fb = resp(in_app=hist, pend=[pending(OT, M)])
add('in_app_fallback_without_latest_receipt_info', 'No latest_receipt_info: the transactions come from receipt.in_app.',
    fb, {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 25*DAY), 'outcome': 'renewed'}},
    stored=st(expires=NOW - 5*DAY))
ex = monthly_history(n=2, last_expires=NOW - 2*DAY)
add('grace_period', 'Expired 2 days ago, billing grace period until 4 days from now: grace_period (still entitled).',
    resp(lri=ex, pend=[pending(OT, M, is_in_billing_retry_period='1', grace_period_expires_date_ms=str(NOW + 4*DAY),
                               expiration_intent='2')]),
    {'verdict': 'ok', 'decision': {'outcome': 'changed', 'state': 'grace_period', 'expires_at': iso(NOW - 2*DAY),
      'grace_period_expires_at': iso(NOW + 4*DAY), 'in_billing_retry': True, 'expiration_intent': 2}},
    stored=st(expires=NOW - 2*DAY, state='active'))
add('billing_retry_after_grace_ended', 'Grace period over, Apple still retrying the card: billing_retry (no entitlement).',
    resp(lri=ex, pend=[pending(OT, M, is_in_billing_retry_period='1', grace_period_expires_date_ms=str(NOW - 1*DAY),
                               expiration_intent='2')]),
    {'verdict': 'ok', 'decision': {'outcome': 'lapsed', 'state': 'billing_retry', 'in_billing_retry': True}},
    stored=st(expires=NOW - 2*DAY, state='grace_period'))
add('billing_retry_without_grace', 'Expired with billing retry and no grace period configured: billing_retry.',
    resp(lri=ex, pend=[pending(OT, M, is_in_billing_retry_period='1', expiration_intent='2')]),
    {'verdict': 'ok', 'decision': {'outcome': 'lapsed', 'state': 'billing_retry', 'grace_period_expires_at': None}},
    stored=st(expires=NOW - 2*DAY, state='active'))
add('expired_auto_renew_off', 'Customer turned auto-renew off; the period ended: expired, expiration_intent 1.',
    resp(lri=ex, pend=[pending(OT, M, auto_renew='0', is_in_billing_retry_period='0', expiration_intent='1')]),
    {'verdict': 'ok', 'decision': {'outcome': 'lapsed', 'state': 'expired', 'auto_renew': False, 'expiration_intent': 1,
      'in_billing_retry': False}},
    stored=st(expires=NOW - 2*DAY, state='active'))
eq = monthly_history(n=2, last_expires=NOW)
add('expires_exactly_now', 'expires_date_ms equals now exactly: NOT active (expiry must be strictly after now).',
    resp(lri=eq, pend=[pending(OT, M, auto_renew='0')]),
    {'verdict': 'ok', 'decision': {'state': 'expired', 'outcome': 'lapsed', 'expires_at': iso(NOW)}},
    stored=st(expires=NOW, state='active'))
add('expires_one_ms_after_now', 'expires_date_ms one millisecond after now: active.',
    resp(lri=monthly_history(n=2, last_expires=NOW + 1), pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 1)}},
    stored=st(expires=NOW - 30*DAY, state='active'))
add('bundle_mismatch', 'A valid receipt of another app: rejected, never extended, no state.',
    resp(lri=monthly_history(last_expires=NOW + 300*DAY), pend=[pending(OT, M)], bundle='com.evil.clone'),
    {'verdict': 'ok', 'decision': {'outcome': 'rejected', 'state': None, 'reject_reason': 'bundle_mismatch',
      'expires_at': iso(NOW - 5*DAY), 'has_latest_receipt': False}},
    stored=st(expires=NOW - 5*DAY, state='active'))
add('subscription_not_in_receipt', 'A valid receipt without the row\'s original_transaction_id: rejected.',
    resp(lri=g2, pend=[pending(OT2, V)]),
    {'verdict': 'ok', 'decision': {'outcome': 'rejected', 'state': None, 'reject_reason': 'subscription_not_in_receipt'}},
    stored=st(expires=NOW + 3*DAY))
nums = {'status': 0, 'environment': 'Production',
        'receipt': {'bundle_id': BUNDLE, 'in_app': []},
        'latest_receipt_info': [
            {'transaction_id': 1000000811111111, 'original_transaction_id': 1000000811111111, 'product_id': M, 'quantity': 1,
             'purchase_date_ms': NOW - 35*DAY, 'expires_date_ms': NOW - 5*DAY, 'is_trial_period': True,
             'is_in_intro_offer_period': False, 'web_order_line_item_id': 230000000000001},
            {'transaction_id': 1000000811111501, 'original_transaction_id': 1000000811111111, 'product_id': M, 'quantity': 1,
             'purchase_date_ms': NOW - 5*DAY, 'expires_date_ms': NOW + 25*DAY, 'is_trial_period': False,
             'is_in_intro_offer_period': 1, 'is_upgraded': False}],
        'pending_renewal_info': [{'original_transaction_id': 1000000811111111, 'auto_renew_status': True,
                                  'auto_renew_product_id': M, 'is_in_billing_retry_period': 0}]}
add('numbers_instead_of_strings', 'Ids, dates and flags as JSON numbers/booleans instead of strings: read the same.',
    nums, {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 25*DAY), 'latest_transaction_id': '1000000811111501',
      'auto_renew': True, 'is_intro_offer': True, 'is_trial': False, 'ledger_kinds': ['initial', 'renewal']}},
    stored=st(expires=NOW - 5*DAY))
uf = resp(lri=[dict(t, some_future_field={'nested': [1, 2, {'x': None}]}, another='x') for t in hist],
          pend=[dict(pending(OT, M), price_increase_status='1', offer_type=3)],
          extra={'unified_receipt': {'status': 0, 'latest_receipt_info': []}, 'x_new_flag': True, 'weird': None})
add('unknown_fields_ignored', 'Unknown members (objects, arrays, nulls) anywhere are ignored.',
    uf, {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 25*DAY)}}, stored=st(expires=NOW - 5*DAY))
mini = {'status': 0, 'receipt': {'bundle_id': BUNDLE},
        'latest_receipt_info': [{'transaction_id': OT, 'original_transaction_id': OT, 'product_id': M,
                                 'expires_date_ms': str(NOW + 7*DAY)}]}
add('missing_optional_fields', 'Only the essential fields; no environment, no pending_renewal_info, no latest_receipt.',
    mini, {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 7*DAY), 'auto_renew': None,
      'environment': None, 'has_notes': True, 'has_latest_receipt': False, 'ledger_kinds': ['initial']}},
    stored={'original_transaction_id': OT, 'product_id': M})
add('recovered_from_billing_retry', 'The card went through after billing retry: recovered.',
    resp(lri=hist, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'outcome': 'recovered', 'state': 'active', 'in_billing_retry': False}},
    stored=st(expires=NOW - 5*DAY, state='billing_retry', in_billing_retry=True))
add('unchanged_row', 'Nothing differs from the stored row: unchanged.',
    resp(lri=hist, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'outcome': 'unchanged', 'state': 'active'}},
    stored=st(expires=NOW + 25*DAY, state='active', auto_renew=True, auto_renew_product_id=M,
              latest_transaction_id=hist[-1]['transaction_id'], environment='Production', in_billing_retry=False))
add('auto_renew_turned_off', 'Same period, auto-renew now off: changed.',
    resp(lri=hist, pend=[pending(OT, M, auto_renew='0')]),
    {'verdict': 'ok', 'decision': {'outcome': 'changed', 'state': 'active', 'auto_renew': False}},
    stored=st(expires=NOW + 25*DAY, state='active', auto_renew=True, auto_renew_product_id=M,
              latest_transaction_id=hist[-1]['transaction_id'], environment='Production'))
add('pending_downgrade_to_yearly', 'A plan change scheduled for the next renewal: auto_renew_product_id differs from product_id: changed.',
    resp(lri=hist, pend=[pending(OT, M, auto_product=Y)]),
    {'verdict': 'ok', 'decision': {'outcome': 'changed', 'product_id': M, 'auto_renew_product_id': Y}},
    stored=st(expires=NOW + 25*DAY, state='active', auto_renew=True, auto_renew_product_id=M,
              latest_transaction_id=hist[-1]['transaction_id'], environment='Production'))
add('apple_expiry_earlier_than_stored_is_taken', 'Apple\'s expiry is earlier than the stored one and nothing was '
    'refunded: Apple\'s answer is the truth; the move backwards is recorded.',
    resp(lri=monthly_history(n=2, last_expires=NOW + 5*DAY), pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'expires_at': iso(NOW + 5*DAY), 'expiry_moved_backwards': True,
      'state': 'active', 'latest_transaction_id': '1000000811111201', 'outcome': 'changed'}},
    stored=st(expires=NOW + 35*DAY, latest_transaction_id='stored-latest'))
lapsed = monthly_history(n=3, last_expires=NOW - 10*DAY)
add('app_stored_later_expiry_lapsed', 'The app stored an expiry months later than Apple\'s; Apple says the subscription '
    'lapsed 10 days ago with auto-renew off: expired, lapsed, the expiry moves back.',
    resp(lri=lapsed, pend=[pending(OT, M, auto_renew='0', expiration_intent='1')]),
    {'verdict': 'ok', 'decision': {'outcome': 'lapsed', 'state': 'expired', 'expires_at': iso(NOW - 10*DAY),
      'expiry_moved_backwards': True, 'product_id': M}},
    stored=st(expires=NOW + 200*DAY, state='active'))
ym_at = NOW - 70*DAY
ym = [txn(OT, OT, Y, NOW - 100*DAY, NOW + 265*DAY, is_upgraded='true'),
      txn('1000000811111901', OT, P, ym_at, ym_at + 30*DAY),
      txn('1000000811111902', OT, P, ym_at + 30*DAY, ym_at + 60*DAY)]
add('yearly_upgraded_to_monthly_lapsed', 'A yearly plan upgraded (is_upgraded, no cancellation date) to a premium monthly '
    'plan that lapsed 10 days ago: expired on the monthly product, not active on the yearly until next year.',
    resp(lri=ym, pend=[pending(OT, P, auto_renew='0', expiration_intent='1')]),
    {'verdict': 'ok', 'decision': {'outcome': 'lapsed', 'state': 'expired', 'expires_at': iso(ym_at + 60*DAY),
      'product_id': P, 'expiry_moved_backwards': True, 'revoked_at': None,
      'ledger_kinds': ['initial', 'upgrade', 'renewal']}},
    stored=st(expires=NOW + 265*DAY, state='active', product=Y))
tr = [txn(OT, OT, M, NOW - 2*DAY, NOW + 5*DAY, is_trial_period='true')]
add('free_trial_active', 'First week free: active, is_trial.',
    resp(lri=tr, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'is_trial': True, 'is_intro_offer': False, 'outcome': 'renewed',
      'ledger_kinds': ['initial']}},
    stored={'original_transaction_id': OT, 'product_id': M})
oc = [txn(OT, OT, M, NOW - 40*DAY, NOW - 10*DAY),
      txn('1000000811111601', OT, M, NOW - 10*DAY, NOW + 20*DAY, offer_code_ref_name='SUMMER24', is_in_intro_offer_period='true')]
add('offer_code_renewal', 'A renewal bought with an offer code: the ledger records the offer.',
    resp(lri=oc, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'is_intro_offer': True, 'ledger_offers': [None, 'SUMMER24']}},
    stored=st(expires=NOW - 10*DAY))
fam = [txn(OT, OT, M, NOW - 10*DAY, NOW + 20*DAY, in_app_ownership_type='FAMILY_SHARED')]
add('family_shared', 'A family-shared subscription: ownership type in the ledger.',
    resp(lri=fam, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'ledger_ownership': ['FAMILY_SHARED']}},
    stored=st(expires=NOW - 10*DAY))
sb = monthly_history(n=3, last_expires=NOW + 3*60000)
add('status_0_sandbox_environment', 'A sandbox response (after 21007): environment recorded as Sandbox.',
    resp(env='Sandbox', lri=sb, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'environment': 'Sandbox'}},
    stored=st(expires=NOW - 5*DAY, environment='Production'), env='Sandbox')
rs = [txn(OT, OT, M, NOW - 100*DAY, NOW - 70*DAY, cancel=NOW - 80*DAY, cancellation_reason='1'),
      txn('1000000811111701', OT, M, NOW - 5*DAY, NOW + 25*DAY)]
add('resubscribed_after_refund', 'Refunded long ago (row revoked), resubscribed since: recovered.',
    resp(lri=rs, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'outcome': 'recovered', 'state': 'active', 'revoked_at': None,
      'expires_at': iso(NOW + 25*DAY)}},
    stored=st(expires=NOW - 80*DAY, state='revoked', revoked_at=iso(NOW - 80*DAY)))
dup = resp(lri=hist + [hist[-1]], pend=[pending(OT, M)])
add('duplicate_transaction_entries', 'The same transaction listed twice: counted once in the ledger.',
    dup, {'verdict': 'ok', 'decision': {'state': 'active', 'ledger_kinds': ['initial', 'renewal', 'renewal', 'renewal']}},
    stored=st(expires=NOW - 5*DAY))
nb = resp(lri=hist, pend=[pending(OT, M)], bundle=None)
add('receipt_without_bundle_id', 'A status-0 body whose receipt has no bundle_id cannot be checked: rejected as bundle mismatch.',
    nb, {'verdict': 'ok', 'decision': {'outcome': 'rejected', 'reject_reason': 'bundle_mismatch', 'state': None}},
    stored=st(expires=NOW - 5*DAY))
# 10 MB: template; the test inflates it with other subscriptions' transactions up to the size given.
add('ten_megabyte_body', 'A 10 MB body (a long-lived account with many subscriptions): parsed linearly, decided correctly. '
    'The file is a template: the test inserts generated transactions of other original_transaction_ids until the body exceeds inflate_to_bytes.',
    resp(lri=hist, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(NOW + 25*DAY), 'ledger_kinds': ['initial', 'renewal', 'renewal', 'renewal']}},
    stored=st(expires=NOW - 5*DAY), extra_ctx={'inflate_to_bytes': 10 * 1024 * 1024})
# Upgrade from a yearly plan to a premium monthly: the yearly transaction still says it expires in months,
# but its entitlement ended at the upgrade; the premium monthly one carries it now.
uy_at = NOW - 5*DAY
uy = [txn(OT, OT, Y, NOW - 100*DAY, NOW + 265*DAY, is_upgraded='1', cancel=uy_at),
      txn('1000000811111802', OT, P, uy_at, uy_at + 30*DAY)]
add('upgrade_from_yearly_ends_at_upgrade_time', 'Yearly upgraded to premium monthly: the replaced yearly expiry (months away) does not count; the premium month does.',
    resp(lri=uy, pend=[pending(OT, P)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(uy_at + 30*DAY), 'product_id': P,
      'latest_transaction_id': '1000000811111802', 'ledger_kinds': ['initial', 'upgrade'], 'revoked_at': None}},
    stored={'original_transaction_id': OT, 'product_id': Y})
# An upgrade as real receipts show it: is_upgraded on the replaced transaction, no cancellation date.
un = [txn(OT, OT, Y, NOW - 100*DAY, NOW + 265*DAY, is_upgraded='true'),
      txn('1000000811112002', OT, P, uy_at, uy_at + 30*DAY)]
add('upgrade_without_cancellation_date', 'Yearly upgraded to premium monthly; the replaced yearly transaction carries '
    'is_upgraded but no cancellation date: it still entitles nothing after the upgrade; the premium month does.',
    resp(lri=un, pend=[pending(OT, P)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'expires_at': iso(uy_at + 30*DAY), 'product_id': P,
      'latest_transaction_id': '1000000811112002', 'ledger_kinds': ['initial', 'upgrade'], 'revoked_at': None,
      'expiry_moved_backwards': True}},
    stored=st(expires=NOW + 265*DAY, state='active', product=Y))
# A refunded yearly plan, then a paid monthly one in the same group.
rp = [txn(OT, OT, Y, NOW - 60*DAY, NOW + 305*DAY, cancel=NOW - 30*DAY, cancellation_reason='0'),
      txn('1000000811112101', OT, M, NOW - 10*DAY, NOW + 20*DAY)]
add('refund_then_paid_purchase_active', 'The yearly plan was refunded, then the customer paid for a monthly one that is '
    'valid now: a refund counts as never purchased and does not take away the paid month: active on the monthly.',
    resp(lri=rp, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'outcome': 'changed', 'expires_at': iso(NOW + 20*DAY),
      'product_id': M, 'revoked_at': None, 'cancellation_reason': None, 'expiry_moved_backwards': True,
      'ledger_kinds': ['refund', 'renewal']}},
    stored=st(expires=NOW + 305*DAY, state='active', product=Y))
add('refund_then_paid_purchase_after_revocation', 'The row was revoked after the yearly refund; the customer bought a '
    'monthly plan since: recovered (the revoked row is re-verified and found).',
    resp(lri=rp, pend=[pending(OT, M)]),
    {'verdict': 'ok', 'decision': {'state': 'active', 'outcome': 'recovered', 'expires_at': iso(NOW + 20*DAY),
      'product_id': M, 'revoked_at': None}},
    stored=st(expires=NOW - 30*DAY, state='revoked', product=Y, revoked_at=iso(NOW - 30*DAY)))
rl = [txn(OT, OT, M, NOW - 100*DAY, NOW - 70*DAY),
      txn('1000000811112201', OT, Y, NOW - 70*DAY, NOW + 295*DAY, cancel=NOW - 20*DAY, cancellation_reason='1')]
add('refund_of_later_plan_with_nothing_valid_revokes', 'An old monthly period lapsed, the yearly plan that followed was '
    'refunded, nothing is valid now: revoked; the expiry falls back to the monthly period, explicitly.',
    resp(lri=rl, pend=[pending(OT, Y, auto_renew='0')]),
    {'verdict': 'ok', 'decision': {'state': 'revoked', 'outcome': 'revoked', 'expires_at': iso(NOW - 70*DAY),
      'revoked_at': iso(NOW - 20*DAY), 'cancellation_reason': 1, 'expiry_moved_backwards': True}},
    stored=st(expires=NOW + 295*DAY, state='active', product=Y))

# ---------- bounds on Apple's values: refused as implausible_value, naming the field ----------
def bounded(name, description, field, mutate):
    body = resp(lri=monthly_history(n=2), pend=[pending(OT, M)])
    body['receipt']['in_app'] = json.loads(json.dumps(body['receipt']['in_app']))  # mutate latest_receipt_info only
    mutate(body)
    add(name, description, body, {'verdict': 'reject', 'reason_code': 'implausible_value', 'reason_contains': field,
        'parse_error': 'implausible_value', 'parse_error_field': field}, stored=st())
bounded('implausible_expires_date_far_future', 'expires_date_ms 9000000000000000 (year 287,000): PostgreSQL cannot '
    'store it and no subscription ends then: refused, the row untouched.', 'latest_receipt_info[1].expires_date_ms',
    lambda b: b['latest_receipt_info'][1].update({'expires_date_ms': '9000000000000000'}))
bounded('implausible_date_near_int64_max', 'A date at 9223372036854775000 ms (near Int64.max): refused, no crash.',
    'latest_receipt_info[0].purchase_date_ms',
    lambda b: b['latest_receipt_info'][0].update({'purchase_date_ms': 9223372036854775000}))
bounded('implausible_date_before_app_store', 'An expiry in 1970 (0 + one day): before the App Store existed: refused.',
    'latest_receipt_info[1].expires_date_ms', lambda b: b['latest_receipt_info'][1].update({'expires_date_ms': '86400000'}))
bounded('implausible_nul_in_text', 'A NUL character in a product id: PostgreSQL text cannot hold it: refused.',
    'latest_receipt_info[1].product_id',
    lambda b: b['latest_receipt_info'][1].update({'product_id': 'com.example.reader.monthly\u0000x'}))
bounded('implausible_grace_date', 'A grace period expiry at 9000000000000000 ms in pending_renewal_info: refused.',
    'pending_renewal_info[0].grace_period_expires_date_ms',
    lambda b: b['pending_renewal_info'][0].update({'grace_period_expires_date_ms': '9000000000000000'}))
bounded('implausible_integer_beyond_32_bits', 'expiration_intent 99999999999 does not fit the 32-bit column: refused.',
    'pending_renewal_info[0].expiration_intent',
    lambda b: b['pending_renewal_info'][0].update({'expiration_intent': '99999999999'}))
add('implausible_status_beyond_32_bits', 'A status of 99999999999: not Apple\'s and not storable: refused.',
    {'status': 99999999999}, {'verdict': 'reject', 'reason_code': 'implausible_value', 'reason_contains': 'status',
    'parse_error': 'implausible_value', 'parse_error_field': 'status'})
print(len(scenarios))
