import { SETTLEMENT_WAIT_REASONS, SETTLEMENT_WAIT_REASON_TEXT } from '@facilitator/core';

/**
 * The status page's script: fetches status.json (relative: it works under a path prefix), renders one card
 * per network with DOM calls (textContent only: nothing from the JSON is parsed as HTML), and polls again
 * every max_age_seconds (at least 2 s). Every shown figure carries its raw JSON value in data-value.
 */
export const PAGE_SCRIPT = `
'use strict';
var WINDOWS = [['5m', '5 min'], ['1h', '1 hour'], ['24h', '24 hours']];
var REASONS = ${JSON.stringify(Object.fromEntries(SETTLEMENT_WAIT_REASONS.map((r) => [r, SETTLEMENT_WAIT_REASON_TEXT[r].label])))};
var lastGood = null;

function el(tag, attrs, children) {
  var node = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
  (children || []).forEach(function (c) { node.append(c); });
  return node;
}
function figure(field, value, text, tag) {
  return el(tag || 'td', { 'data-field': field, 'data-value': value === null ? 'null' : String(value) }, [text]);
}
function ms(v) {
  if (v === null) return '\\u2014';
  if (v >= 1000) return (v / 1000).toFixed(2) + ' s';
  return (v < 10 ? v.toFixed(1) : String(Math.round(v))) + ' ms';
}
function pct(v) { return v === null ? '\\u2014' : (Math.round(v * 1000) / 10) + '%'; }
function gwei(wei) { return wei === null ? 'unknown' : (Number(wei) / 1e9).toFixed(3).replace(/\\.?0+$/, '') + ' gwei'; }
function usdc(units) { return (Number(units) / 1e6).toFixed(6).replace(/\\.?0+$/, '') + ' USDC'; }
function since(iso) { return iso === null ? '' : 'since ' + new Date(iso).toLocaleTimeString(); }

function health(n) {
  if (n.rpc.up === 0) return ['bad', 'Unavailable'];
  if (n.rpc.up < n.rpc.total || n.waiting.total > 0 || n.fee.gas_above_cap) return ['warn', 'Degraded'];
  return ['ok', 'Operational'];
}

function windowTable(n) {
  var head = el('tr', {}, [el('th', {}, [''])].concat(WINDOWS.map(function (w) { return el('th', { scope: 'col' }, [w[1]]); })));
  function row(label, cells) { return el('tr', {}, [el('th', { scope: 'row' }, [label])].concat(cells)); }
  function each(of) { return WINDOWS.map(function (w) { return of(w[0]); }); }
  var rows = [
    row('Verify p50', each(function (w) { return figure('verify.' + w + '.p50_ms', n.verify[w].p50_ms, ms(n.verify[w].p50_ms)); })),
    row('Verify p95', each(function (w) { return figure('verify.' + w + '.p95_ms', n.verify[w].p95_ms, ms(n.verify[w].p95_ms)); })),
    row('Verifications', each(function (w) { return figure('verify.' + w + '.count', n.verify[w].count, String(n.verify[w].count)); })),
    row('Settle p50', each(function (w) { return figure('settle.' + w + '.p50_ms', n.settle[w].p50_ms, ms(n.settle[w].p50_ms)); })),
    row('Settle p95', each(function (w) { return figure('settle.' + w + '.p95_ms', n.settle[w].p95_ms, ms(n.settle[w].p95_ms)); })),
    row('Settle success', each(function (w) { return figure('settle.' + w + '.success_rate', n.settle[w].success_rate, pct(n.settle[w].success_rate)); })),
    row('Settled / failed', each(function (w) {
      var s = n.settle[w];
      return el('td', {}, [figure('settle.' + w + '.settled', s.settled, String(s.settled), 'span'), ' / ', figure('settle.' + w + '.failed', s.failed, String(s.failed), 'span')]);
    }))
  ];
  return el('div', { class: 'scroll' }, [el('table', {}, [el('thead', {}, [head]), el('tbody', {}, rows)])]);
}

function waitingList(n) {
  if (n.waiting.by_reason.length === 0) return el('p', { class: 'none', 'data-field': 'waiting.total', 'data-value': '0' }, ['No settlement is waiting.']);
  var items = n.waiting.by_reason.map(function (r) {
    return el('li', { 'data-reason': r.reason }, [
      el('span', {}, [REASONS[r.reason] || r.reason, ' ', el('span', { class: 'sub' }, [r.reason])]),
      el('span', {}, [figure('waiting.' + r.reason, r.count, String(r.count), 'strong'), ' ', el('span', { class: 'sub' }, [since(r.oldest_since)])])
    ]);
  });
  return el('div', {}, [el('p', {}, [figure('waiting.total', n.waiting.total, String(n.waiting.total), 'strong'), ' waiting for the chain']), el('ul', {}, items)]);
}

function rpcList(n) {
  if (n.rpc.endpoints.length === 0) return el('p', { class: 'none' }, ['No endpoint configured.']);
  return el('ul', {}, n.rpc.endpoints.map(function (e) {
    return el('li', { 'data-endpoint': e.endpoint }, [
      el('span', {}, [el('span', { class: 'dot' + (e.up ? '' : ' down') }), 'Endpoint ' + e.endpoint + ' ', figure('rpc.' + e.endpoint + '.up', e.up, e.up ? 'up' : 'down', 'strong')]),
      el('span', { class: 'sub' }, [ms(e.latency_ms) + ' avg \\u00b7 ' + e.answered + ' answered \\u00b7 ' + e.failed + ' failed'])
    ]);
  }));
}

function feeList(n) {
  var f = n.fee;
  return el('dl', {}, [
    el('dt', {}, ['Facilitator fee']), figure('fee.facilitator_fee_units', f.facilitator_fee_units, usdc(f.facilitator_fee_units) + ' per settlement', 'dd'),
    el('dt', {}, ['Network base fee']), figure('fee.base_fee_per_gas_wei', f.base_fee_per_gas_wei, gwei(f.base_fee_per_gas_wei) + (f.gas_above_cap ? ' (above cap: settlements wait)' : ''), 'dd'),
    el('dt', {}, ['Our gas price cap']), figure('fee.max_fee_per_gas_cap_wei', f.max_fee_per_gas_cap_wei, gwei(f.max_fee_per_gas_cap_wei), 'dd')
  ]);
}

function card(n) {
  var h = health(n);
  return el('section', { class: 'card', 'data-network': n.network }, [
    el('h2', {}, [n.name, el('span', { class: 'caip' }, [n.network]), el('span', { class: 'badge ' + h[0], 'data-health': h[0] }, [h[1]])]),
    el('h3', {}, ['Latency and outcomes']), windowTable(n),
    el('h3', {}, ['Settlements waiting']), waitingList(n),
    el('h3', {}, ['RPC endpoints (this API process)']), rpcList(n),
    el('h3', {}, ['Fees']), feeList(n)
  ]);
}

function render(status) {
  lastGood = status;
  document.getElementById('networks').replaceChildren.apply(document.getElementById('networks'), status.networks.map(card));
  var at = document.getElementById('computed-at');
  at.textContent = new Date(status.computed_at).toLocaleString();
  at.setAttribute('data-value', status.computed_at);
  var ages = status.window_max_age_seconds;
  document.getElementById('refresh-note').textContent = ages['5m'] === ages['24h']
    ? 'refreshed every ' + ages['5m'] + ' s'
    : 'the 5 minutes refreshed every ' + ages['5m'] + ' s, the hour and the day every ' + ages['24h'] + ' s';
  document.getElementById('problem').hidden = true;
}

function refresh() {
  return fetch('status.json', { cache: 'no-store', headers: { accept: 'application/json' } })
    .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
    .then(render)
    .catch(function (err) {
      var p = document.getElementById('problem');
      p.textContent = 'Could not refresh the status (' + err.message + ')' + (lastGood ? '; showing the figures of ' + new Date(lastGood.computed_at).toLocaleString() + '.' : '.');
      p.hidden = false;
    })
    .then(function () {
      var every = Math.max(2, lastGood ? lastGood.max_age_seconds : 5);
      setTimeout(refresh, every * 1000);
    });
}
refresh();
`;
