-- evalspec for Neovim: starts evalspec-lsp for YAML/JSON buffers.
--
-- The server decides which files are Weval blueprints or AgentV eval files and stays silent on
-- every other YAML/JSON file, so attaching it to all of them is safe.
--
--   require("evalspec").setup({ cmd = { "evalspec-lsp" } })
--
-- Neovim 0.8+ uses vim.lsp.start (which reuses a client per root); 0.7 uses vim.lsp.start_client
-- and vim.lsp.buf_attach_client, keeping one client per root itself.

local M = {}

local defaults = {
  name = "evalspec",
  cmd = { "evalspec-lsp" },
  filetypes = { "yaml", "json" },
  -- The first of these found walking up from the file marks the workspace root.
  root_markers = { ".git", "pyproject.toml", "package.json", ".agentv", "blueprints" },
  init_options = { debounceMs = 75 },
  capabilities = nil,
  on_attach = nil,
  -- Neovim batches buffer changes before sending them; the server debounces again.
  debounce_text_changes = 80,
}

M.config = nil
local clients_by_root = {} -- Neovim 0.7 only: root -> client id

local uv = vim.loop

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function parent(dir)
  local up = vim.fn.fnamemodify(dir, ":h")
  if up == dir then
    return nil
  end
  return up
end

--- The nearest folder above `file` that holds one of `markers`, or the file's own folder.
function M.find_root(file, markers)
  local start = vim.fn.fnamemodify(file, ":p:h")
  local dir = start
  while dir do
    for _, marker in ipairs(markers) do
      if exists(dir .. "/" .. marker) then
        return dir
      end
    end
    dir = parent(dir)
  end
  return start
end

local function client_config(config, root)
  return {
    name = config.name,
    cmd = config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = config.init_options,
    capabilities = config.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = config.on_attach,
    flags = { debounce_text_changes = config.debounce_text_changes },
  }
end

local function is_running(id)
  local client = id and vim.lsp.get_client_by_id(id)
  return client ~= nil and not client.is_stopped()
end

--- Attach evalspec-lsp to buffer `bufnr` (a real file of one of the configured filetypes).
function M.attach(bufnr)
  local config = M.config
  if config == nil then
    return nil
  end
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return nil -- scratch buffers, help, terminals…
  end
  local root = M.find_root(name, config.root_markers)
  if vim.lsp.start then -- Neovim 0.8+
    return vim.lsp.start(client_config(config, root), { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  if not is_running(id) then
    id = vim.lsp.start_client(client_config(config, root))
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

function M.setup(opts)
  opts = opts or {}
  local config = vim.tbl_deep_extend("force", {}, defaults, opts)
  -- Lists are replaced, not merged index by index.
  for _, key in ipairs({ "cmd", "filetypes", "root_markers" }) do
    if opts[key] ~= nil then
      config[key] = opts[key]
    end
  end
  M.config = config

  local group = vim.api.nvim_create_augroup("evalspec", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers opened before setup() ran.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.filetypes, vim.bo[buf].filetype) then
      M.attach(buf)
    end
  end
end

return M
