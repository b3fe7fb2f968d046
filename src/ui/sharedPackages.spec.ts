/**
 * The labextension's shared singletons must ask for the ranges our
 * dependencies declare, not for the JupyterLab that the build ran in;
 * otherwise an older supported JupyterLab warns "Unsatisfied version" for
 * each of them. The browser smoke journeys (ui-tests/compat) prove it at run
 * time, and this test catches a dependency that was raised without its
 * shared range.
 */
import pkg from '../../package.json';

describe('package.json jupyterlab.sharedPackages', () => {
  const dependencies: Record<string, string> = pkg.dependencies;
  const shared: Record<string, unknown> = pkg.jupyterlab.sharedPackages;
  const frameworkPackages = Object.keys(dependencies).filter(
    name => name.startsWith('@jupyterlab/') || name.startsWith('@lumino/')
  );

  it('lists every JupyterLab and Lumino dependency', () => {
    expect(frameworkPackages.length).toBeGreaterThan(0);
    expect(Object.keys(shared).sort()).toEqual([...frameworkPackages].sort());
  });

  it.each(frameworkPackages)(
    '%s: the range of dependencies, a singleton, not bundled',
    name => {
      expect(shared[name]).toEqual({
        bundled: false,
        singleton: true,
        requiredVersion: dependencies[name]
      });
    }
  );
});
