// The VS Code side of `dwc lsp`: start the server over stdio for the four
// languages and pass the settings as initializationOptions (docs/EDITORS.md).
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const cfg = vscode.workspace.getConfiguration('dogwood');
  const options = {};
  for (const key of ['schema', 'events', 'disable']) {
    const v = cfg.get(key);
    if (v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)) options[key] = v;
  }
  const server = { command: cfg.get('path') || 'dwc', args: ['lsp', '--stdio'] };
  client = new LanguageClient('dogwood', 'Dogwood (dwc lsp)', server, {
    documentSelector: ['dogwood', 'cedar', 'cedarschema', 'dwschema'].map((language) => ({ scheme: 'file', language })),
    initializationOptions: options,
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/{dwc.toml,.dwcrc,*.cedarschema,*.dwschema}') },
  });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
