/**
 * The merchant page's script (plain browser JavaScript, kept free of backticks and template
 * placeholders so it can live in this string). The session token lives in this closure only: never in
 * storage, never in a cookie; a reload signs in again.
 */
export const MERCHANT_PAGE_JS = String.raw`(function () {
  'use strict';
  var SIGN_IN_SECONDS = 300;
  var state = { domain: null, merchant: null, token: null, settlementsBefore: null, deliveriesBefore: null, pendingManual: null, useWallet: false };
  var $ = function (id) { return document.getElementById(id); };

  function show(id, visible) { $(id).hidden = !visible; }
  function say(text, ok) { var m = $('message'); m.textContent = text; m.className = ok ? 'ok' : ''; m.hidden = !text; }
  function cell(row, text, className) { var td = document.createElement('td'); td.textContent = text == null ? '' : String(text); if (className) td.className = className; row.appendChild(td); return td; }

  /** token units (6 decimals) as "1.234567 USDC", by string arithmetic: no float ever rounds money */
  function usdc(units) {
    var s = String(units).replace(/^0+(?=\d)/, '');
    while (s.length < 7) s = '0' + s;
    var whole = s.slice(0, -6), frac = s.slice(-6).replace(/0+$/, '');
    return whole + (frac ? '.' + frac : '') + ' USDC';
  }

  function randomNonce() {
    var bytes = new Uint8Array(32); crypto.getRandomValues(bytes);
    return '0x' + Array.prototype.map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
  }

  /** canonical JSON of a request's parameters, as the API signs them: sorted keys, no spaces */
  function canonical(value) {
    if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
    if (value && typeof value === 'object') return '{' + Object.keys(value).sort().map(function (k) { return JSON.stringify(k) + ':' + canonical(value[k]); }).join(',') + '}';
    return JSON.stringify(value);
  }

  /** The EIP-712 typed data of one merchant request (what eth_signTypedData_v4 and cast sign). */
  function typedData(action, parameters) {
    var d = state.domain;
    return {
      types: Object.assign({ EIP712Domain: [
        { name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }] }, d.types),
      primaryType: d.primary_type,
      domain: d.domain,
      message: { action: action, merchant: state.merchant, parameters: canonical(parameters), nonce: randomNonce(), expiresAt: String(Math.floor(Date.now() / 1000) + SIGN_IN_SECONDS) },
    };
  }

  function proofOf(data, signature) {
    return { network: state.domain.network, nonce: data.message.nonce, expires_at: Number(data.message.expiresAt), signature: signature.trim() };
  }

  /** A signature of the typed data: from the wallet, or pasted by hand after showing what to sign. */
  function sign(data) {
    if (state.useWallet) {
      return window.ethereum.request({ method: 'eth_signTypedData_v4', params: [state.merchant, JSON.stringify(data)] });
    }
    $('typed-data').value = JSON.stringify(data, null, 2);
    $('pasted-signature').value = '';
    show('manual', true);
    return new Promise(function (resolve, reject) { state.pendingManual = { resolve: resolve, reject: reject }; });
  }

  async function api(method, path, body) {
    var headers = { accept: 'application/json' };
    if (state.token) headers.authorization = 'Bearer ' + state.token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    var res = await fetch('v1/merchants/' + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 204) return null;
    var answer = res.headers.get('content-type') && res.headers.get('content-type').indexOf('json') >= 0 ? await res.json() : await res.blob();
    if (!res.ok) {
      var err = new Error(answer && answer.error ? answer.error.message : 'HTTP ' + res.status);
      err.status = res.status;
      throw err;
    }
    return answer;
  }

  function readAddress() {
    var address = $('address').value.trim();
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error('enter the merchant address: 0x and 40 hex digits');
    state.merchant = address.toLowerCase();
  }

  async function signIn(useWallet) {
    say('');
    state.useWallet = useWallet;
    try {
      if (useWallet) {
        var accounts = await window.ethereum.request({ method: 'eth_requestAccounts' });
        if (!$('address').value.trim() && accounts && accounts[0]) $('address').value = accounts[0];
      }
      readAddress();
      var data = typedData('session.create', {});
      var signature = await sign(data);
      var session = await api('POST', state.merchant + '/session', { proof: proofOf(data, signature) });
      state.token = session.session_token;
      $('who').textContent = session.merchant + ' · signed in until ' + new Date(session.expires_at).toLocaleTimeString();
      show('sign-in', false); show('manual', false); show('sign-out', true); show('account', true);
    } catch (err) {
      show('manual', false);
      say('Sign-in refused: ' + err.message);
      return;
    }
    await loadAll();
  }

  /** Each part on its own: one that cannot be read (e.g. the chain's node is down) leaves the others shown. */
  async function loadAll() {
    var parts = [['fees and allowance', loadAccount], ['settlements', loadSettlements], ['webhook deliveries', loadDeliveries], ['discovery', loadDiscovery]];
    var failures = [];
    await Promise.all(parts.map(function (part) {
      return part[1](true).catch(function (err) { failures.push('Could not load ' + part[0] + ': ' + err.message); });
    }));
    if (failures.length) say(failures.join(' '));
    $('account').dataset.loaded = 'true';
  }

  async function loadAccount() {
    var a = await api('GET', state.merchant + '/account');
    $('fees-paid').textContent = usdc(a.fees_paid);
    $('fee-count').textContent = String(a.settlements_with_fee);
    $('treasury').textContent = a.treasury;
    var body = $('allowances').tBodies[0]; body.textContent = '';
    a.networks.forEach(function (n) {
      var row = body.insertRow();
      cell(row, n.network); cell(row, usdc(n.fee)); cell(row, usdc(n.allowance)); cell(row, usdc(n.balance));
      cell(row, n.settlements_covered).dataset.covered = n.settlements_covered;
    });
  }

  async function loadSettlements(first) {
    var q = '?limit=20' + (!first && state.settlementsBefore ? '&before=' + encodeURIComponent(state.settlementsBefore) : '');
    var page = await api('GET', state.merchant + '/settlements' + q);
    var body = $('settlements').tBodies[0]; if (first) body.textContent = '';
    page.settlements.forEach(function (s) {
      var row = body.insertRow(); row.dataset.id = s.id;
      cell(row, s.id, 'mono'); cell(row, new Date(s.created_at).toLocaleString()); cell(row, s.payer, 'mono');
      cell(row, usdc(s.amount)); cell(row, s.fee_collected ? usdc(s.fee) : '—'); cell(row, s.state, 'state-' + s.state);
      cell(row, s.settlement_tx_hash || '', 'mono');
    });
    state.settlementsBefore = page.next_before; show('more-settlements', !!page.next_before);
  }

  async function loadDeliveries(first) {
    var q = '?limit=20' + (!first && state.deliveriesBefore ? '&before=' + encodeURIComponent(state.deliveriesBefore) : '');
    var page = await api('GET', state.merchant + '/webhook-deliveries' + q);
    var body = $('deliveries').tBodies[0]; if (first) body.textContent = '';
    page.deliveries.forEach(function (d) {
      var row = body.insertRow(); row.dataset.id = d.id;
      cell(row, d.event_type); cell(row, new Date(d.created_at).toLocaleString()); cell(row, d.url, 'mono');
      cell(row, d.status, 'status-' + d.status);
      var list = document.createElement('ol'); list.className = 'attempts';
      d.attempts.forEach(function (a) {
        var item = document.createElement('li');
        item.textContent = new Date(a.at).toLocaleTimeString() + ' — ' + (a.status_code != null ? 'HTTP ' + a.status_code : a.error) + ' (' + a.duration_ms + ' ms)';
        list.appendChild(item);
      });
      cell(row, '').appendChild(list);
    });
    state.deliveriesBefore = page.next_before; show('more-deliveries', !!page.next_before);
  }

  /** every resource of the merchant in the bazaar catalog, listed or not, and for each rejection its reason and field */
  async function loadDiscovery() {
    var answer = await api('GET', state.merchant + '/discovery');
    var body = $('discovery').tBodies[0]; body.textContent = '';
    answer.resources.forEach(function (r) {
      var row = body.insertRow(); row.dataset.key = r.resource_key; row.dataset.listed = String(r.listed);
      cell(row, r.resource_key, 'mono'); cell(row, r.type);
      cell(row, r.listed ? 'listed' : 'not listed', r.listed ? 'state-settled' : 'state-failed');
      cell(row, r.listed ? '' : (r.rejection ? r.rejection.reason : r.not_listed_because), 'reason');
      cell(row, r.rejection ? r.rejection.field : '', 'mono field');
      cell(row, r.payments_settled);
      cell(row, r.settle_success_rate == null ? '—' : Math.round(r.settle_success_rate * 100) + '%');
      cell(row, r.median_price == null ? '—' : usdc(r.median_price));
      cell(row, new Date(r.last_settled_at).toLocaleString());
    });
    show('discovery-empty', answer.resources.length === 0);
  }

  async function exportCsv() {
    try {
      var blob = await api('GET', state.merchant + '/settlements.csv');
      var link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = 'settlements-' + state.merchant + '.csv';
      document.body.appendChild(link); link.click(); link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 60000);
    } catch (err) { say('Export failed: ' + err.message); }
  }

  async function rotateSecret() {
    say('');
    try {
      var data = typedData('webhook_secret.rotate', {});
      var signature = await sign(data);
      var answer = await api('POST', state.merchant + '/webhook-secret/rotate', { proof: proofOf(data, signature) });
      $('secret-value').textContent = answer.secret;
      show('manual', false); show('new-secret', true);
      say('Webhook secret rotated. Store the new secret now: it is not shown again here.', true);
    } catch (err) { show('manual', false); say('Rotation refused: ' + err.message); }
  }

  async function signOut() {
    try { await api('DELETE', state.merchant + '/session'); } catch (err) { /* expired already: signed out either way */ }
    state.token = null;
    show('account', false); show('sign-out', false); show('new-secret', false); show('sign-in', true);
    $('who').textContent = ''; $('secret-value').textContent = '';
    say('Signed out.', true);
  }

  async function start() {
    state.domain = await (await fetch('v1/merchants/request-domain')).json();
    show('wallet-sign-in', !!window.ethereum);
    $('wallet-sign-in').onclick = function () { signIn(true); };
    $('prepare-sign-in').onclick = function () { signIn(false); };
    $('submit-signature').onclick = function () { if (state.pendingManual) state.pendingManual.resolve($('pasted-signature').value); };
    $('cancel-signature').onclick = function () { if (state.pendingManual) state.pendingManual.reject(new Error('cancelled')); };
    $('more-settlements').onclick = function () { loadSettlements(false); };
    $('more-deliveries').onclick = function () { loadDeliveries(false); };
    $('export-csv').onclick = exportCsv;
    $('rotate-secret').onclick = rotateSecret;
    $('sign-out').onclick = signOut;
    document.body.dataset.ready = 'true';
  }

  start().catch(function (err) { say('The page could not start: ' + err.message); });
})();
`;
