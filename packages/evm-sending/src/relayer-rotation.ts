/**
 * Picks relayers in turn, so transfers spread over the relayer keys instead of queueing behind one
 * key's nonce sequence. Per process: processes need not agree, since nonces are allocated in Postgres.
 */
export class RelayerRotation {
  private readonly relayers: readonly string[];
  private position = 0;

  constructor(relayers: readonly string[]) {
    if (relayers.length === 0) throw new Error('RelayerRotation needs at least one relayer address');
    this.relayers = [...relayers];
  }

  next(): string {
    const relayer = this.relayers[this.position];
    this.position = (this.position + 1) % this.relayers.length;
    return relayer;
  }

  get addresses(): readonly string[] {
    return this.relayers;
  }
}
