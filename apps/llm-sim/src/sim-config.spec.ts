import { DEFAULT_CONTROL_PORT, parseSimConfig, SimConfigError } from './sim-config';

describe('parseSimConfig', () => {
  it('defaults to three targets on 18101..18103 and control on 18100', () => {
    expect(parseSimConfig({})).toEqual({
      host: '127.0.0.1',
      controlPort: DEFAULT_CONTROL_PORT,
      logLevel: 'info',
      targets: [
        { name: 'local_vllm_7b', port: 18101, model: 'qwen2.5-7b-instruct', latencyMs: 0 },
        { name: 'local_vllm_32b', port: 18102, model: 'qwen2.5-32b-instruct', latencyMs: 0 },
        { name: 'cloud_main', port: 18103, model: 'gpt-4.1', latencyMs: 0 },
      ],
    });
  });

  it('reads latency, model ids with colons, host, port and level', () => {
    const config = parseSimConfig({
      LLM_SIM_TARGETS: ' a:0:m1:25 , b:9000:llama3:8b, c:9001:llama3:8b:40 ',
      LLM_SIM_CONTROL_PORT: '0',
      LLM_SIM_HOST: '0.0.0.0',
      LOG_LEVEL: 'silent',
    });
    expect(config).toEqual({
      host: '0.0.0.0',
      controlPort: 0,
      logLevel: 'silent',
      targets: [
        { name: 'a', port: 0, model: 'm1', latencyMs: 25 },
        { name: 'b', port: 9000, model: 'llama3:8b', latencyMs: 0 },
        { name: 'c', port: 9001, model: 'llama3:8b', latencyMs: 40 },
      ],
    });
  });

  it('treats empty variables as unset', () => {
    expect(parseSimConfig({ LLM_SIM_CONTROL_PORT: '', LOG_LEVEL: ' ' }).controlPort).toBe(DEFAULT_CONTROL_PORT);
  });

  it.each([
    [{ LLM_SIM_CONTROL_PORT: 'abc' }, /LLM_SIM_CONTROL_PORT: "abc" must be an integer/],
    [{ LLM_SIM_CONTROL_PORT: '70000' }, /LLM_SIM_CONTROL_PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL: /],
    [{ LLM_SIM_TARGETS: 'a:1' }, /LLM_SIM_TARGETS: entry 1 \("a:1"\): expected name:port:model/],
    [{ LLM_SIM_TARGETS: 'a:x:m' }, /LLM_SIM_TARGETS: entry 1 .*port "x"/],
    [{ LLM_SIM_TARGETS: 'a b:1:m' }, /LLM_SIM_TARGETS: entry 1 .*name "a b"/],
    [{ LLM_SIM_TARGETS: 'a:1:m,a:2:m' }, /LLM_SIM_TARGETS: duplicate target name "a"/],
    [{ LLM_SIM_TARGETS: 'a:1:m,b:1:m' }, /LLM_SIM_TARGETS: duplicate port 1/],
    [{ LLM_SIM_TARGETS: ',' }, /LLM_SIM_TARGETS: at least one target/],
    [{ LLM_SIM_TARGETS: 'a:18100:m' }, /LLM_SIM_CONTROL_PORT: port 18100 is also used by target "a"/],
  ])('rejects %j naming the variable', (env, message) => {
    expect(() => parseSimConfig(env)).toThrow(SimConfigError);
    expect(() => parseSimConfig(env)).toThrow(message);
  });

  it('reports every bad variable at once', () => {
    expect(() => parseSimConfig({ LLM_SIM_CONTROL_PORT: 'x', LOG_LEVEL: 'y' })).toThrow(/LLM_SIM_CONTROL_PORT.*LOG_LEVEL/);
  });
});
