-- Headless Neovim with the editors/nvim plugin: the inlay hints its client receives for a blueprint, then
-- a rename of a point definition through `vim.lsp.buf.rename` (prepareRename, rename, the edit applied to
-- the buffer by Neovim itself). Environment as for init.lua; results written to $EVALSPEC_NVIM_OUT as JSON.

vim.opt.runtimepath:prepend(os.getenv("EVALSPEC_PLUGIN"))
vim.opt.swapfile = false
vim.cmd("filetype on")

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local harness = dofile(here .. "harness.lua").start(150000)
local result, finish, step = harness.result, harness.finish, harness.step

local function line_of(bufnr, pattern, nth)
  local seen = 0
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local at = line:find(pattern, 1, true)
    if at then
      seen = seen + 1
      if seen == (nth or 1) then
        return i - 1, at - 1
      end
    end
  end
  error("no line holds " .. pattern)
end

local function run()
  local bufnr
  if not step("open", function()
    require("evalspec").setup({
      cmd = { os.getenv("EVALSPEC_PYTHON"), "-m", "evalspec_lsp" },
      init_options = { debounceMs = 20, requestBudgetMs = 10000, runCosts = false },
    })
    vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("EVALSPEC_NVIM_FILE")))
    bufnr = vim.api.nvim_get_current_buf()
    assert(vim.wait(60000, function()
      return #vim.lsp.buf_get_clients(bufnr) > 0
    end, 20), "no language client attached to the buffer")
  end) then
    return
  end

  if not step("inlay hints", function()
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                     range = { start = { line = 0, character = 0 }, ["end"] = { line = 100, character = 0 } } }
    local hints = {}
    assert(vim.wait(60000, function()
      local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/inlayHint", params, 20000) or {}
      for _, response in pairs(responses) do
        if response.result and #response.result > 0 then
          hints = response.result
        end
      end
      return #hints > 0
    end, 100), "no inlay hints")
    result.hints = {}
    for _, h in ipairs(hints) do
      table.insert(result.hints, { line = h.position.line, character = h.position.character, label = h.label })
    end
  end) then
    return
  end

  step("rename", function()
    local line, col = line_of(bufnr, "$ref: greets", 2)
    vim.api.nvim_win_set_cursor(0, { line + 1, col + 8 })  -- on `greets` of the second $ref
    vim.lsp.buf.rename("welcomes")
    assert(vim.wait(60000, function()
      local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
      return not text:find("greets", 1, true)
    end, 20), "the rename was not applied: " .. table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n"))
    result.renamed = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  end)
  finish()
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
  vim.schedule(run)
end })
