// kubernetes-models and its parts are ES modules whose exports offer only `import`. Jest resolves
// with the `require` condition; where that finds nothing, the `import` entry is taken, and
// jest.config.js compiles those files to CommonJS like the rest.
module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (err) {
    if (options.conditions?.includes('import')) throw err;
    return options.defaultResolver(request, {
      ...options,
      conditions: [...(options.conditions ?? []), 'import'],
    });
  }
};
