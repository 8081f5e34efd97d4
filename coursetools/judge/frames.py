"""Frames between the checker and its host: a pickled message after its length, on a socket or a pipe.

Both ends are trusted processes (the grading process and the checker); nothing a student wrote is unpickled
here: a kernel's answers reach the checker as text and are decoded by `answers`.

host -> checker ('begin', notebook), ('run', cell), ('answer', answer); checker -> host ('ready', {pid}),
('begun', {errors, order}), ('call', request), ('done', result).
"""
import pickle
import struct


def send(stream, message):
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    data = struct.pack('>Q', len(data)) + data
    view = memoryview(data)
    while view:
        view = view[stream.write(view):]


def receive(stream):
    size, = struct.unpack('>Q', _read_exactly(stream, 8))
    return pickle.loads(_read_exactly(stream, size))


def _read_exactly(stream, size):
    parts = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            raise EOFError('the other side closed the connection')
        parts.append(chunk)
        size -= len(chunk)
    return b''.join(parts)
