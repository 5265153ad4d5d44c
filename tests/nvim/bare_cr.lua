-- Headless Neovim edits a blueprint saved with old Mac line endings (`fileformat=mac`): Neovim sends
-- its text and its edits with a bare CR between lines, and shows the server's positions on its own lines.
-- Environment as for init.lua; results written to $EVALSPEC_NVIM_OUT as JSON.

vim.opt.runtimepath:prepend(os.getenv("EVALSPEC_PLUGIN"))
vim.opt.swapfile = false
vim.cmd("filetype on")

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local harness = dofile(here .. "harness.lua").start(150000)
local result, finish, step = harness.result, harness.finish, harness.step

local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp_data = d.user_data and d.user_data.lsp or {}
    table.insert(out, { lnum = d.lnum, col = d.col, end_col = d.end_col, code = lsp_data.code or d.code })
  end
  return out
end

local function line_of(bufnr, pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:find(pattern, 1, true) then
      return i - 1
    end
  end
  error("no line holds " .. pattern)
end

local function run()
  local bufnr
  if not step("open", function()
    require("evalspec").setup({
      cmd = { os.getenv("EVALSPEC_PYTHON"), "-m", "evalspec_lsp" },
      init_options = { debounceMs = 20, requestBudgetMs = 10000 },
    })
    vim.cmd("edit ++ff=mac " .. vim.fn.fnameescape(os.getenv("EVALSPEC_NVIM_FILE")))
    bufnr = vim.api.nvim_get_current_buf()
    result.fileformat = vim.bo[bufnr].fileformat
    result.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    assert(vim.wait(60000, function()
      return #vim.lsp.buf_get_clients(bufnr) > 0
    end, 20), "no language client attached to the buffer")
  end) then
    return
  end

  if not step("diagnostics on open", function()
    assert(vim.wait(60000, function()
      return #diagnostics(bufnr) > 0
    end, 20), "no diagnostics arrived")
    result.diagnostics_on_open = diagnostics(bufnr)
    result.shuld_line = line_of(bufnr, "shuld")
  end) then
    return
  end

  if not step("hover", function()
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                     position = { line = line_of(bufnr, "models:"), character = 2 } }
    local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 60000)
    assert(responses, "no answer to textDocument/hover")
    for _, response in pairs(responses) do
      assert(not response.err, "hover failed: " .. vim.inspect(response.err))
      result.hover = response.result and response.result.contents.value or vim.NIL
    end
  end) then
    return
  end

  step("diagnostics after edits", function()
    -- Fix the typo in place and add another one on a new line below it (incremental changes).
    local at = line_of(bufnr, "shuld")
    local s, e = vim.api.nvim_buf_get_lines(bufnr, at, at + 1, false)[1]:find("shuld", 1, true)
    vim.api.nvim_buf_set_text(bufnr, at, s - 1, at, e, { "should" })
    vim.api.nvim_buf_set_lines(bufnr, at + 2, at + 2, false, { "  idael: Paris" })
    result.idael_line = at + 2
    assert(vim.wait(60000, function()
      local d = diagnostics(bufnr)
      return #d == 1 and d[1].lnum ~= result.shuld_line
    end, 20), "the diagnostics did not follow the edits: " .. vim.inspect(diagnostics(bufnr)))
    result.diagnostics_after_edit = diagnostics(bufnr)
  end)
  finish()
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
  vim.schedule(run)
end })
