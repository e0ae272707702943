// The SGL extension: starts `sglc lsp` (the language server, docs/tools.md)
// for .sgl files with vscode-languageclient.  The setting sgl.server.path
// names the sglc to run; sgl.server.enable turns the server off.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client = undefined;

async function start() {
  const config = vscode.workspace.getConfiguration("sgl");
  if (!config.get("server.enable", true)) {
    return;
  }
  const command = config.get("server.path", "sglc") || "sglc";
  // No `transport`: the client then talks over the server's stdin/stdout
  // without adding a --stdio argument (sglc lsp accepts one all the same).
  const serverOptions = { command, args: ["lsp"] };
  const clientOptions = {
    documentSelector: [{ language: "sgl" }],
    outputChannelName: "SGL Language Server",
  };
  client = new LanguageClient("sgl", "SGL Language Server", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    client = undefined;
    vscode.window.showErrorMessage(
      `SGL: could not start '${command} lsp' (${err}). Set sgl.server.path to the sglc ` +
        "of an environment with the lsp extra: pip install 'sglc[lsp]'."
    );
  }
}

async function stop() {
  if (client !== undefined) {
    const c = client;
    client = undefined;
    await c.stop();
  }
}

async function activate(context) {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("sgl.server")) {
        await stop();
        await start();
      }
    })
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
