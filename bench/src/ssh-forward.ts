import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { freePort, pollUntil, Proc } from '@svcrouter/testkit';
import { accepts, SSH, startSshd } from '@svcrouter/testkit/sshd';

export { sshMissing } from '@svcrouter/testkit/sshd';

const run = promisify(execFile);

/** OpenSSH's `ssh -L` in front of a loopback port, through a throwaway `sshd` on the same machine. */
export interface SshForward {
  /** The forward's local port: what a client connects to. */
  port: number;
  /** The `ssh` client process and the listening `sshd`. */
  sshPid: number;
  sshdPid: number;
  /** What ssh and sshd negotiated, as `ssh -G` reports the client's first choice (cipher). */
  cipher: string;
  /** CPU seconds of ssh, the listening sshd and every process it forked so far. */
  cpuSeconds(): number;
  close(): Promise<void>;
}

/**
 * Starts a throwaway `sshd` on a free loopback port, then `ssh -N -L <port>:<targetHost>:<target>`
 * logged in with its client key, and resolves once the forward accepts connections. Default
 * ciphers: what a user running `ssh -L` gets.
 */
export async function startSshForward(targetPort: number, targetHost = '127.0.0.1'): Promise<SshForward> {
  // The connections-per-second row opens thousands of channels; sshd must not throttle it.
  const sshd = await startSshd({ maxSessions: 1000 });
  const stops: Array<() => Promise<void>> = [() => sshd.close()];
  try {
    const port = await freePort();
    const sshArgs = [
      '-N',
      '-L',
      `127.0.0.1:${port}:${targetHost}:${targetPort}`,
      '-p',
      String(sshd.port),
      ...sshd.clientOptions,
      '-o',
      'ExitOnForwardFailure=yes',
      sshd.login,
    ];
    const ssh = new Proc(spawn(SSH, sshArgs, { stdio: ['ignore', 'pipe', 'pipe'] }), 'ssh');
    stops.push(() => ssh.stop('SIGTERM', 5_000));
    await pollUntil('ssh -L forwarding', async () => {
      if (ssh.child.exitCode !== null) throw new Error(`ssh -L exited ${ssh.child.exitCode}:\n${ssh.output}`);
      return accepts(port);
    });
    const { stdout } = await run(SSH, ['-G', '-p', String(sshd.port), '127.0.0.1']);
    const cipher = /^ciphers (\S+)$/m.exec(stdout)?.[1]?.split(',')[0] ?? 'default';
    return {
      port,
      sshPid: ssh.pid,
      sshdPid: sshd.pid,
      cipher,
      cpuSeconds: () => [ssh.pid, ...withDescendants(sshd.pid)].reduce((sum, pid) => sum + cpuOrZero(pid), 0),
      async close() {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop();
    throw error;
  }
}

/** `pid` and every live process below it (sshd forks a monitor and a session process per login). */
function withDescendants(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8').trim();
        if (children) out.push(...children.split(/\s+/).map(Number));
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return out;
}

/** CPU seconds of a process, 0 once it is gone. */
function cpuOrZero(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
