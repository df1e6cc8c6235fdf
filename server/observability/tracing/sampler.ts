// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the OpenTelemetry specification names
// them (sdk-environment-variables): the SDK's TracerProvider takes a Sampler object and, since
// its version 3, reads neither variable itself.
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';
import { ConfigError } from '../../config.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** The ratio of *traceidratio samplers: OTEL_TRACES_SAMPLER_ARG, a number in [0, 1], default 1. */
function ratio(env: Env): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (raw === undefined || raw === '') return 1;
  const r = Number(raw);
  if (!Number.isFinite(r) || r < 0 || r > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, not "${raw}"`);
  return r;
}

/** The sampler OTEL_TRACES_SAMPLER names; default parentbased_always_on (the specification's). */
export function samplerFromEnv(env: Env): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio(env));
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio(env)) });
    default:
      throw new ConfigError(
        `OTEL_TRACES_SAMPLER "${name}" is not one this server supports: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio`,
      );
  }
}
