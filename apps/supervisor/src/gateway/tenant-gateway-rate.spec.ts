import { gatewayRateDecision } from './tenant-gateway-rate';

describe('gatewayRateDecision', () => {
  it('lets a tenant make gateway_rpm requests a minute, then asks it to come back at the next minute', () => {
    const start = 1_700_000_080_000; // 40 s into a minute
    expect(gatewayRateDecision(1, 2, start)).toEqual({ allowed: true });
    expect(gatewayRateDecision(2, 2, start)).toEqual({ allowed: true });
    expect(gatewayRateDecision(3, 2, start)).toEqual({ allowed: false, retryAfterS: 20 });
  });

  it('never says to retry in less than a second', () => {
    expect(gatewayRateDecision(5, 1, 1_700_000_099_999)).toEqual({ allowed: false, retryAfterS: 1 });
  });
});
