"""What a kernel's outputs may add to a notebook: errors and streams capped, `max_output_bytes` (a trait of
`SandboxedExecute`) per notebook, each output counted with its metadata and its own weight (100,000 empty displays
made 13 MB), only a cell's first error kept past it, and a note where output was dropped."""
from nbformat.notebooknode import NotebookNode

from coursetools.grading.channel import cap_error, error_output, mb

OUTPUT_OVERHEAD = 100       # bytes of notebook an output costs besides what it holds (about 130, measured)


class CappedOutputs:
    """Mixed into nbclient's `NotebookClient` before it: `output` keeps a notebook within `max_output_bytes`."""

    @staticmethod
    def _add_error(cell: NotebookNode, ename: str, message: str) -> None:
        cell.setdefault('outputs', [])
        cell.outputs.append(NotebookNode(error_output(ename, message)))

    def _note(self) -> NotebookNode:
        return NotebookNode(output_type='stream', name='stdout',
                            text=f'\n[output truncated by the grader after {mb(self.max_output_bytes)}]\n')

    def output(self, outs, msg, display_id, cell_index):
        limit, msg_type, content = self.max_output_bytes, msg['msg_type'], msg['content']
        if not limit or msg_type not in ('error', 'stream', 'display_data', 'execute_result', 'update_display_data'):
            return super().output(outs, msg, display_id, cell_index)
        if msg_type == 'error':
            cap_error(content)
            if not any(out.get('output_type') == 'error' for out in outs):     # a cell's first error is kept
                return super().output(outs, msg, display_id, cell_index)
        size = OUTPUT_OVERHEAD + len(str(content))              # its metadata counts too
        remaining = limit - self._output_used
        if size <= remaining:
            self._output_used += size
            return super().output(outs, msg, display_id, cell_index)
        out = None
        if msg_type == 'stream' and remaining > 0:      # keep what fits of a stream, drop the rest
            content['text'] = content['text'][:remaining]
            out = super().output(outs, msg, display_id, cell_index)
        self._output_used = limit
        if cell_index not in self._truncated_cells:
            self._truncated_cells.add(cell_index)
            outs.append(self._note())
        return out
