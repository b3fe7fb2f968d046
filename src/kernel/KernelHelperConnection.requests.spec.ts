/** KernelHelperConnection: requests to the helper over its comm, and their answers. */
import { HelperRequestError, RequestAbandonedError } from './PendingRequests';
import { CONFIG, connect } from '../testing/connectionFixtures';
import { makeHello, makeSample, wire } from '../testing/fixtures';
import { FakeKernel, settle } from '../testing/fakeKernel';

describe('KernelHelperConnection', () => {
  describe('requests', () => {
    it('resolves a snapshot with the seq of its sample', async () => {
      const kernel = new FakeKernel();
      const { model, connection } = connect(kernel);
      await settle();
      const comm = kernel.lastComm;
      comm.receive(wire(makeHello()));
      const pending = connection.requestSnapshot();
      const request = comm.lastRequest;
      expect(request.type).toBe('snapshot');
      expect(typeof request.request_id).toBe('string');
      comm.receive(wire(makeSample({ seq: 7, reason: 'snapshot' })));
      comm.receive({
        type: 'reply',
        request_id: request.request_id,
        request_type: 'snapshot',
        result: { seq: 7 }
      });
      await expect(pending).resolves.toEqual({ seq: 7 });
      expect(model.latest?.seq).toBe(7);
    });

    it('gives every request its own id', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      void connection.ping().catch(() => undefined);
      void connection.ping().catch(() => undefined);
      const [a, b] = kernel.lastComm.sent;
      expect(a.request_id).not.toBe(b.request_id);
    });

    it('sends configure with the config and resolves with the effective one', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      const pending = connection.configure({ interval_s: 0.5 });
      const request = kernel.lastComm.lastRequest;
      expect(request).toEqual({
        type: 'configure',
        request_id: request.request_id,
        config: { interval_s: 0.5 }
      });
      kernel.lastComm.receive({
        type: 'reply',
        request_id: request.request_id,
        request_type: 'configure',
        result: { config: { ...CONFIG, interval_s: 0.5 } }
      });
      await expect(pending).resolves.toEqual({
        config: { ...CONFIG, interval_s: 0.5 }
      });
    });

    it('rejects with the helper error code and message', async () => {
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      const pending = connection.configure({ interval_s: 999 });
      const id = kernel.lastComm.lastRequest.request_id;
      kernel.lastComm.receive({
        type: 'error',
        request_id: id,
        code: 'invalid_config',
        message: 'interval_s must be ...'
      });
      await expect(pending).rejects.toBeInstanceOf(HelperRequestError);
      await expect(pending).rejects.toMatchObject({ code: 'invalid_config' });
    });

    it('rejects at once a request whose answer is malformed, and still counts it', async () => {
      // The model warns on the console about the message it ignored: expected here.
      const warn = jest
        .spyOn(console, 'warn')
        .mockImplementation(() => undefined);
      const kernel = new FakeKernel();
      const { model, connection } = connect(kernel);
      await settle();
      const pending = connection.configure({ interval_s: 0.5 });
      const id = kernel.lastComm.lastRequest.request_id;
      kernel.lastComm.receive({
        type: 'reply',
        request_id: id,
        request_type: 'configure',
        result: 'oops'
      });
      await expect(pending).rejects.toBeInstanceOf(HelperRequestError);
      await expect(pending).rejects.toMatchObject({ code: 'malformed_answer' });
      await expect(pending).rejects.toThrow(
        /answer was malformed.*reply\.result/
      );
      expect(model.ignoredMessageCount).toBe(1);
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining('reply.result: expected an object')
      );
      warn.mockRestore();
    });

    it('rejects at once a request whose error answer is malformed', async () => {
      const warn = jest
        .spyOn(console, 'warn')
        .mockImplementation(() => undefined);
      const kernel = new FakeKernel();
      const { connection } = connect(kernel);
      await settle();
      const pending = connection.ping();
      const id = kernel.lastComm.lastRequest.request_id;
      kernel.lastComm.receive({ type: 'error', request_id: id, code: 7 });
      await expect(pending).rejects.toMatchObject({ code: 'malformed_answer' });
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining('error.code: expected a string')
      );
      warn.mockRestore();
    });

    it('times out, and drops the late reply', async () => {
      const kernel = new FakeKernel();
      const { model, connection } = connect(kernel, { requestTimeoutMs: 10 });
      await settle();
      const pending = connection.ping();
      const id = kernel.lastComm.lastRequest.request_id;
      await expect(pending).rejects.toBeInstanceOf(RequestAbandonedError);
      kernel.lastComm.receive({
        type: 'reply',
        request_id: id,
        request_type: 'ping',
        result: {}
      });
      expect(model.notes).toEqual([]);
    });

    it('rejects pending requests when the kernel restarts', async () => {
      const kernel = new FakeKernel();
      const { sessionContext, connection } = connect(kernel);
      await settle();
      const pending = connection.ping();
      sessionContext.setStatus('restarting');
      await expect(pending).rejects.toBeInstanceOf(RequestAbandonedError);
    });

    it('refuses requests without a comm', async () => {
      const kernel = new FakeKernel('R');
      const { connection } = connect(kernel);
      await settle();
      await expect(connection.ping()).rejects.toThrow('not connected');
      await expect(connection.configure({ interval_s: 2 })).resolves.toBeNull();
    });
  });
});
