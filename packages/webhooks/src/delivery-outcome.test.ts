import { categoryOf, deliveryOutcomeOf } from './delivery-outcome';

describe('delivery outcome categories', () => {
  it.each([
    [{ statusCode: 204 }, 'delivered'],
    [{ statusCode: 503 }, 'http_503'],
    [{ timedOut: true, errorCode: 'ECONNRESET' }, 'timeout'],
    [{ errorCode: 'ECONNREFUSED' }, 'refused'],
    [{ errorCode: 'EADDRNOTPUBLIC' }, 'refused'],
    [{ errorCode: 'ENOTFOUND' }, 'dns'],
    [{ errorCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'tls'],
    [{ errorCode: 'ERR_TLS_CERT_ALTNAME_INVALID' }, 'tls'],
    [{ errorCode: 'EPORTNOTALLOWED' }, 'port_not_allowed'],
    [{}, 'network'],
  ])('%j is %s', (result, category) => {
    expect(deliveryOutcomeOf(result)).toBe(category);
  });

  it('shows older raw errors as categories, never their text', () => {
    expect(categoryOf('connect ECONNREFUSED 10.1.2.3:5432')).toBe('refused');
    expect(categoryOf('no answer within 5000 ms')).toBe('timeout');
    expect(categoryOf('receiver answered HTTP 404')).toBe('http_404');
    expect(categoryOf('socket hang up')).toBe('network');
    expect(categoryOf('http_500')).toBe('http_500');
    expect(categoryOf(null)).toBeNull();
  });
});
