-- pandoc filter for serializerd.yaml(5): a table's rows become tagged paragraphs (the
-- key with its default, then the meaning, and any other column as "header: text"),
-- since wide tables do not fit a terminal's width in man(1).
local function inlines(blocks)
  local result = pandoc.List()
  for i, block in ipairs(blocks) do
    if i > 1 then result:insert(pandoc.Space()) end
    if block.content then result:extend(block.content) end
  end
  return result
end

function Table(tbl)
  local headers = {}
  for i, cell in ipairs(tbl.head.rows[1] and tbl.head.rows[1].cells or {}) do
    headers[i] = pandoc.utils.stringify(cell.contents)
  end
  local items = pandoc.List()
  for _, body in ipairs(tbl.bodies) do
    for _, row in ipairs(body.body) do
      local term = inlines(row.cells[1].contents)
      local details = pandoc.List()
      for i = 2, #row.cells do
        local text = inlines(row.cells[i].contents)
        if headers[i] == "default" then
          if #text > 0 then
            term:extend({pandoc.Space(), pandoc.Str("(default"), pandoc.Space()})
            term:extend(text)
            term:insert(pandoc.Str(")"))
          end
        elseif #text > 0 then
          local para = pandoc.List()
          if headers[i] and headers[i] ~= "" and headers[i] ~= "meaning" then
            para:insert(pandoc.Emph(pandoc.Str(headers[i] .. ":")))
            para:insert(pandoc.Space())
          end
          para:extend(text)
          details:insert(pandoc.Para(para))
        end
      end
      items:insert({term, {details}})
    end
  end
  return pandoc.DefinitionList(items)
end
