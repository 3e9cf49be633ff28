import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, pollUntil, Proc } from '@svcrouter/testkit';
import { tempDir } from './proc.js';

const run = promisify(execFile);

const SSHD = '/usr/sbin/sshd';
const SSH = '/usr/bin/ssh';
const SSH_KEYGEN = '/usr/bin/ssh-keygen';

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

/** Why the ssh comparison cannot run here, or undefined when it can. */
export function sshMissing(): string | undefined {
  const missing = [SSHD, SSH, SSH_KEYGEN].filter((bin) => !existsSync(bin));
  return missing.length > 0 ? `${missing.join(', ')} missing (apt-get install -y openssh-server openssh-client)` : undefined;
}

/**
 * Starts `sshd -D` on a free loopback port with a generated host key and one authorized key,
 * then `ssh -N -L <port>:127.0.0.1:<target>` logged in with that key, and resolves once the
 * forward accepts connections. Default ciphers: what a user running `ssh -L` gets.
 */
export async function startSshForward(targetPort: number): Promise<SshForward> {
  const dir = await tempDir('svc-bench-ssh-');
  const stops: Array<() => Promise<void>> = [];
  try {
    const hostKey = path.join(dir.dir, 'host_key');
    const clientKey = path.join(dir.dir, 'client_key');
    await run(SSH_KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    await run(SSH_KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-f', clientKey]);
    await writeFile(path.join(dir.dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`));
    // sshd's privilege separation directory; Debian creates it at boot, containers often lack it.
    if (process.getuid?.() === 0) await mkdir('/run/sshd', { recursive: true });
    const sshdPort = await freePort();
    const config = [
      `Port ${sshdPort}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir.dir, 'sshd.pid')}`,
      'UsePAM no',
      'StrictModes no',
      'PermitRootLogin yes',
      'PasswordAuthentication no',
      'AllowTcpForwarding yes',
      // The connections-per-second row opens thousands of channels; none of these must throttle it.
      'MaxSessions 1000',
      `AuthorizedKeysFile ${path.join(dir.dir, 'authorized_keys')}`,
    ].join('\n');
    await writeFile(path.join(dir.dir, 'sshd_config'), `${config}\n`);
    const sshd = new Proc(
      spawn(SSHD, ['-D', '-e', '-f', path.join(dir.dir, 'sshd_config')], { stdio: ['ignore', 'pipe', 'pipe'] }),
      'sshd',
    );
    stops.push(() => sshd.stop('SIGTERM', 5_000));
    await pollUntil('sshd listening', () => accepts(sshdPort));

    const port = await freePort();
    const sshArgs = [
      '-N',
      '-L',
      `127.0.0.1:${port}:127.0.0.1:${targetPort}`,
      '-p',
      String(sshdPort),
      '-i',
      clientKey,
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'ExitOnForwardFailure=yes',
      '-o',
      'LogLevel=ERROR',
      `${os.userInfo().username}@127.0.0.1`,
    ];
    const ssh = new Proc(spawn(SSH, sshArgs, { stdio: ['ignore', 'pipe', 'pipe'] }), 'ssh');
    stops.push(() => ssh.stop('SIGTERM', 5_000));
    await pollUntil('ssh -L forwarding', async () => {
      if (ssh.child.exitCode !== null) throw new Error(`ssh -L exited ${ssh.child.exitCode}:\n${ssh.output}`);
      return accepts(port);
    });
    const { stdout } = await run(SSH, ['-G', '-p', String(sshdPort), '127.0.0.1']);
    const cipher = /^ciphers (\S+)$/m.exec(stdout)?.[1]?.split(',')[0] ?? 'default';
    return {
      port,
      sshPid: ssh.pid,
      sshdPid: sshd.pid,
      cipher,
      cpuSeconds: () => [ssh.pid, ...withDescendants(sshd.pid)].reduce((sum, pid) => sum + cpuOrZero(pid), 0),
      async close() {
        for (const stop of stops.reverse()) await stop();
        await dir.remove();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop();
    await dir.remove();
    throw error;
  }
}

/** Whether something accepts a TCP connection on the loopback port (the connection is dropped at once). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
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
