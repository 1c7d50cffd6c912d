/** Which of Spiderpool's components would stop. */
export interface Stops {
  agent: boolean;
  controller: boolean;
}

/** Spiderpool's two components, each reading conf.yml with its own decoder. */
export type Component = 'agent' | 'controller' | 'both';

/**
 * One result per distinct finding across the agent's (yaml.v3) and the controller's
 * (yaml.v2) findings, in order: the same finding (by `key`) from both stops both
 * components, otherwise only the one that found it.
 */
export function byComponent<T, R>(agent: readonly T[], controller: readonly T[], key: (item: T) => string, render: (item: T, stops: Component) => R): R[] {
  const inAgent = new Set(agent.map(key));
  const inController = new Set(controller.map(key));
  const seen = new Set<string>();
  const out: R[] = [];
  for (const item of [...agent, ...controller]) {
    const k = key(item);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(render(item, inAgent.has(k) && inController.has(k) ? 'both' : inAgent.has(k) ? 'agent' : 'controller'));
  }
  return out;
}
