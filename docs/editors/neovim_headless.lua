-- Drive `atom-contracts server` from Neovim's own LSP client, headless:
--   nvim --headless -u NONE -c "luafile docs/editors/neovim_headless.lua" FILE.py
-- Uses the client API every Neovim since 0.7 has (vim.lsp.start_client), so it runs on
-- the Debian-packaged 0.7.2 too; docs/editors.md gives the 0.11+ `vim.lsp.config` set-up.
-- Prints one line per diagnostic and per code action, then exits 0; exits 1 on a timeout.
local file = vim.api.nvim_buf_get_name(0)
local root = vim.fs and vim.fs.dirname(file) or vim.fn.fnamemodify(file, ":h")
while root ~= "/" and vim.fn.filereadable(root .. "/pyproject.toml") == 0 do
  root = vim.fn.fnamemodify(root, ":h")
end
local cmd = vim.split(os.getenv("ATOM_CONTRACTS_SERVER") or "atom-contracts server", " ")
local id = vim.lsp.start_client({
  name = "atom-contracts",
  cmd = cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = "root" } },
})
if not id then
  io.stdout:write("could not start " .. table.concat(cmd, " ") .. "\n")
  vim.cmd("cquit 1")
end
vim.bo.filetype = "python"
vim.lsp.buf_attach_client(0, id)
local got = vim.wait(20000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
if not got then
  io.stdout:write("no diagnostics within 20 s\n")
  vim.cmd("cquit 1")
end
for _, d in ipairs(vim.diagnostic.get(0)) do
  io.stdout:write(string.format("diagnostic %d:%d %s %s\n", d.lnum + 1, d.col + 1, d.code or "?", d.message))
end
local d = vim.diagnostic.get(0)[1]
local params = {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
  context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0, d.lnum) },
}
local replies = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 20000) or {}
for _, reply in pairs(replies) do
  if reply.err then
    io.stdout:write("error " .. vim.inspect(reply.err) .. "\n")
    vim.cmd("cquit 1")
  end
  for _, action in ipairs(reply.result or {}) do
    io.stdout:write("action " .. (action.kind or "") .. " " .. action.title .. "\n")
  end
end
vim.lsp.stop_client(id)
vim.wait(2000, function()
  return vim.lsp.get_client_by_id(id) == nil
end, 50)
vim.cmd("qall!")
