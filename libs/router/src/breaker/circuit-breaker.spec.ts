import { FakeClock } from '../clock';
import { CircuitBreaker, DEFAULT_BREAKER_SETTINGS } from './circuit-breaker';

describe('CircuitBreaker', () => {
  it('takes new settings on reconfigure, keeping its state and failure streak', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    for (let i = 0; i < 4; i++) breaker.recordFailure(clock.now());
    breaker.reconfigure({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 5, cooldownMs: 5_000 });
    expect(breaker.state(clock.now())).toBe('closed');
    breaker.recordFailure(clock.now()); // the fifth of the streak that began before the reload
    expect(breaker.state(clock.now())).toBe('open');
    clock.advance(5_000);
    expect(breaker.state(clock.now())).toBe('half_open');
    // An open breaker cools down by the cooldown in force now, not the one it opened under.
    breaker.recordFailure(clock.now());
    breaker.reconfigure({ ...DEFAULT_BREAKER_SETTINGS, cooldownMs: 60_000 });
    clock.advance(30_000);
    expect(breaker.state(clock.now())).toBe('open');
    clock.advance(30_000);
    expect(breaker.state(clock.now())).toBe('half_open');
  });

  it('opens after 10 consecutive failures within 30 s', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    for (let i = 0; i < 9; i++) {
      breaker.recordFailure(clock.now());
      clock.advance(1000);
    }
    expect(breaker.state(clock.now())).toBe('closed');
    breaker.recordFailure(clock.now());
    expect(breaker.state(clock.now())).toBe('open');
    expect(breaker.allows(clock.now())).toBe(false);
  });

  it('does not open when the 10 failures are spread over more than 30 s', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker({ ...DEFAULT_BREAKER_SETTINGS, minVolume: 1000 });
    for (let i = 0; i < 10; i++) {
      breaker.recordFailure(clock.now());
      clock.advance(4000);
    }
    expect(breaker.state(clock.now())).toBe('closed');
  });

  it('opens on more than 50 % failures in 60 s with enough volume', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    for (let i = 0; i < 10; i++) {
      breaker.recordSuccess(clock.now());
      breaker.recordFailure(clock.now());
      clock.advance(500);
    }
    expect(breaker.state(clock.now())).toBe('closed'); // exactly 50 %
    breaker.recordFailure(clock.now());
    expect(breaker.state(clock.now())).toBe('open');
  });

  it('needs the minimum volume before the rate counts', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    breaker.recordSuccess(clock.now());
    for (let i = 0; i < 5; i++) breaker.recordFailure(clock.now());
    expect(breaker.state(clock.now())).toBe('closed');
  });

  it('half-opens after the cooldown, lets 3 probes through, and closes when they succeed', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    for (let i = 0; i < 10; i++) breaker.recordFailure(clock.now());
    clock.advance(29_999);
    expect(breaker.state(clock.now())).toBe('open');
    clock.advance(1);
    expect(breaker.state(clock.now())).toBe('half_open');
    for (let i = 0; i < 3; i++) {
      expect(breaker.allows(clock.now())).toBe(true);
      breaker.admit(clock.now());
    }
    expect(breaker.allows(clock.now())).toBe(false);
    breaker.recordSuccess(clock.now());
    breaker.recordSuccess(clock.now());
    expect(breaker.state(clock.now())).toBe('half_open');
    breaker.recordSuccess(clock.now());
    expect(breaker.state(clock.now())).toBe('closed');
  });

  it('opens again on a failed probe, with a fresh cooldown', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker();
    for (let i = 0; i < 10; i++) breaker.recordFailure(clock.now());
    clock.advance(30_000);
    breaker.admit(clock.now());
    expect(breaker.recordFailure(clock.now())).toBe('open');
    clock.advance(29_000);
    expect(breaker.allows(clock.now())).toBe(false);
    clock.advance(1_000);
    expect(breaker.state(clock.now())).toBe('half_open');
  });
});

describe('CircuitBreaker opened by the fleet', () => {
  const settings = { consecutiveFailures: 2, consecutiveWindowMs: 10_000, failureRate: 0.5, rateWindowMs: 60_000, minVolume: 100, cooldownMs: 30_000, halfOpenProbes: 1 };

  it('opens for the rest of the opener’s cooldown, then half-opens on its own', () => {
    const breaker = new CircuitBreaker(settings);
    expect(breaker.openFromFleet(1_000, 20_000)).toBe(true);
    expect(breaker.allows(1_000)).toBe(false);
    expect(breaker.cooldownLeft(1_000)).toBe(20_000);
    expect(breaker.state(20_999)).toBe('open');
    expect(breaker.state(21_000)).toBe('half_open');
  });

  it('a breaker already open longer keeps its own cooldown', () => {
    const breaker = new CircuitBreaker(settings);
    breaker.recordFailure(0);
    breaker.recordFailure(0);
    expect(breaker.openFromFleet(1_000, 10_000)).toBe(false);
    expect(breaker.cooldownLeft(1_000)).toBe(29_000);
  });
});
