/**
 * The merchant page's document. Its script and style are served beside it (./merchant/page.js, .css:
 * relative, so the page also works under a proxy's path prefix) and nothing else is loaded: no CDN, no
 * fonts. Every value the API answers is put in with textContent, never as HTML.
 */
export const MERCHANT_PAGE_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Merchant — x402 facilitator</title>
<link rel="stylesheet" href="merchant/page.css">
<script src="merchant/page.js" defer></script>
</head>
<body>
<header><h1>Merchant</h1><span id="who"></span><button id="sign-out" hidden>Sign out</button></header>
<main>
  <section id="sign-in">
    <h2>Sign in with your payTo key</h2>
    <p>You sign one EIP-712 <code>MerchantRequest</code> (action <code>session.create</code>) with the key of the address payments are made to.
       The session lasts 30 minutes and only reads; changes ask for their own signature.</p>
    <label>Merchant address <input id="address" placeholder="0x…" autocomplete="off" spellcheck="false"></label>
    <div class="row">
      <button id="wallet-sign-in" hidden>Sign in with wallet</button>
      <button id="prepare-sign-in">Sign in without a wallet</button>
    </div>
  </section>

  <section id="manual" hidden>
    <h2>Sign this typed data</h2>
    <p>With the merchant key, e.g. <code>cast wallet sign --data --from-file typed-data.json</code> (Foundry), then paste the signature.
       It expires in 5 minutes.</p>
    <textarea id="typed-data" readonly rows="14"></textarea>
    <label>Signature <input id="pasted-signature" placeholder="0x…" autocomplete="off" spellcheck="false"></label>
    <div class="row"><button id="submit-signature">Continue</button><button id="cancel-signature">Cancel</button></div>
  </section>

  <p id="message" role="alert" hidden></p>

  <div id="account" hidden>
    <section>
      <h2>Fees and allowance</h2>
      <dl class="figures">
        <div><dt>Fees paid</dt><dd id="fees-paid"></dd></div>
        <div><dt>Settlements that paid a fee</dt><dd id="fee-count"></dd></div>
      </dl>
      <table id="allowances"><thead><tr><th>Network</th><th>Fee</th><th>Allowance to treasury</th><th>Balance</th><th>Settlements covered</th></tr></thead><tbody></tbody></table>
      <p class="note">Treasury <code id="treasury"></code>. A settlement needs the fee in both the allowance and the balance.</p>
    </section>

    <section>
      <h2>Settlements</h2>
      <div class="row"><button id="export-csv">Export CSV</button></div>
      <table id="settlements"><thead><tr><th>ID</th><th>Time</th><th>Payer</th><th>Amount</th><th>Fee</th><th>State</th><th>Transaction</th></tr></thead><tbody></tbody></table>
      <button id="more-settlements" hidden>Older settlements</button>
    </section>

    <section id="discovery-section">
      <h2>Discovery</h2>
      <p class="note">Your resources in this facilitator's x402 <code>bazaar</code> catalog (<code>/x402/discovery/resources</code>). A resource is listed once a payment declaring it settles; each one not listed says why, with the field at fault.</p>
      <table id="discovery"><thead><tr><th>Resource</th><th>Type</th><th>Listed</th><th>Why not listed</th><th>Field at fault</th><th>Payers</th><th>Success rate</th><th>Median price</th><th>Last paid</th></tr></thead><tbody></tbody></table>
      <p id="discovery-empty" class="note" hidden>No resource declared with a settled payment yet.</p>
    </section>

    <section>
      <h2>Webhook deliveries</h2>
      <table id="deliveries"><thead><tr><th>Event</th><th>Time</th><th>URL</th><th>Status</th><th>Attempts</th></tr></thead><tbody></tbody></table>
      <button id="more-deliveries" hidden>Older deliveries</button>
    </section>

    <section>
      <h2>Webhook secret</h2>
      <p>Rotating makes a new secret; the old one keeps signing beside it for the grace period. It needs its own signature.</p>
      <button id="rotate-secret">Rotate webhook secret</button>
      <div id="new-secret" hidden><p>Your new secret, shown once:</p><code id="secret-value"></code></div>
    </section>
  </div>
</main>
</body>
</html>
`;
